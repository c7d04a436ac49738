"""
Files a student opens or writes: odd JSON gets a clear sentence,
a UTF-8 byte-order mark is fine, a calibrated link travels inside the scenario file and is
remembered, special files are refused without being read.
"""

import json

import pytest

pytest.importorskip("pytestqt")

from app import scenario_io  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")

DOC = {"schema": "shard-lab-scenario", "version": 1,
       "scenario": {"kind": "all-reduce", "n": 4, "algo": "ring", "nbytes": 4096, "link": "nvlink4"}}


def test_deeply_nested_json_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 30000 + "]" * 30000)  # 60 KB, under the size limit
    with pytest.raises(scenario_io.ScenarioFileError, match="nested far too deeply"):
        scenario_io.load_scenario(str(path))


def test_deeply_nested_json_opens_a_dialog_not_a_traceback(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / "deep.json"
    path.write_text("[" * 30000 + "]" * 30000)
    before = w.model.scenario
    assert w.classroom.open_scenario(str(path)) is False
    assert "nested far too deeply" in w.classroom.last_error
    assert w.model.scenario == before


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "notepad.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(DOC).encode("utf-8"))
    sf = scenario_io.load_scenario(str(path))
    assert (sf.scenario.kind, sf.scenario.n, sf.scenario.nbytes) == ("all-reduce", 4, 4096.0)


# ---------------------------------------------------------------------------------------
# A calibrated link
# ---------------------------------------------------------------------------------------
@pytest.fixture
def links():
    """simcore's LINKS as they were before the test (a calibration adds to them)."""
    from simcore.links import LINKS

    before = dict(LINKS)
    yield LINKS
    LINKS.clear()
    LINKS.update(before)


def _calibrate(qtbot, w, tmp_path):
    """File → Calibrate the link, read an nccl-tests file, name it, "Use as link"."""
    from test_calibrate import nccl_text

    path = tmp_path / "all_reduce_perf.txt"
    path.write_text(nccl_text("all-reduce", 8))
    w.act_calibrate.trigger()
    dlg = w.calibration_dialog
    assert dlg.open_nccl_file(str(path))
    dlg.name_edit.setText("our DGX")
    dlg.use_button.click()
    return dlg.link()


def test_a_calibrated_link_travels_in_the_scenario_file(qtbot, tmp_path, links):
    w = make_window(qtbot, "all-reduce", 8)
    spec = _calibrate(qtbot, w, tmp_path)
    key = w.model.scenario.link
    assert links[key] == spec and w.model.run.link == spec
    path = tmp_path / "calibrated.json"
    assert w.classroom.save_scenario(str(path))
    saved = json.loads(path.read_text(encoding="utf-8"))["scenario"]
    assert saved["link"] == key
    assert saved["link_spec"] == {"name": "our DGX", "alpha": spec.alpha, "bw": spec.bw}
    # another machine: no such preset there
    del links[key]
    w2 = make_window(qtbot, "all-gather", 4)
    assert w2.classroom.open_scenario(str(path)), w2.classroom.last_error
    assert w2.model.run.link == spec  # simulated with the file's α and β
    assert w2.controls.link.currentText() == "our DGX"
    # a preset is written as its key alone
    w2.model.update(link="nvlink4")
    assert w2.classroom.save_scenario(str(path))
    assert "link_spec" not in json.loads(path.read_text(encoding="utf-8"))["scenario"]


def test_a_calibration_and_its_scenario_survive_a_restart(qtbot, tmp_path, links):
    w = make_window(qtbot, "all-reduce", 8)
    w.classroom.restore_session()  # the interactive app: remember the session from now on
    spec = _calibrate(qtbot, w, tmp_path)
    key = w.model.scenario.link
    w.close()
    del links[key]  # a new process starts with simcore's presets only
    w2 = make_window(qtbot, "all-gather", 4)
    w2.classroom.restore_session(restore_scenario=True)
    assert w2.model.scenario.kind == "all-reduce" and w2.model.run.link == spec  # not the default
    names = [w2.controls.link.itemText(i) for i in range(w2.controls.link.count())]
    assert "our DGX" in names


@pytest.mark.parametrize("bad, msg", [
    ({"name": "x", "alpha": -1, "bw": 1e9}, "alpha"),
    ({"name": "x", "alpha": 1e-6, "bw": 0}, "bw"),
    ({"name": "x", "alpha": 1e-6}, "exactly"),
    ({"name": "", "alpha": 1e-6, "bw": 1e9}, "name"),
])
def test_a_bad_link_spec_is_refused_with_a_sentence(bad, msg):
    doc = json.loads(json.dumps(DOC))
    doc["scenario"]["link"] = "measured"
    doc["scenario"]["link_spec"] = bad
    with pytest.raises(scenario_io.ScenarioFileError, match=msg):
        scenario_io.loads(json.dumps(doc))


# ---------------------------------------------------------------------------------------
# Special files: refused from stat() alone, never read
# ---------------------------------------------------------------------------------------
def _fifo(tmp_path):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "pipe.json"
    os.mkfifo(path)  # opening it for reading would wait for a writer: forever
    return str(path)


def test_opening_a_pipe_or_a_kernel_file_is_refused_without_reading(qtbot, tmp_path):
    import os

    w = make_window(qtbot, "all-gather", 4)
    paths = [_fifo(tmp_path)]
    paths += [p for p in ("/proc/kmsg", "/proc/self/status", "/dev/zero") if os.path.exists(p)]
    for p in paths:
        assert w.classroom.open_scenario(p) is False  # returns: the window never hangs
        assert "not a regular file" in w.classroom.last_error or "belongs to the system" in w.classroom.last_error


def test_exports_refuse_system_folders_and_pipes(qtbot, tmp_path):
    import os

    w = make_window(qtbot, "all-gather", 4)
    targets = [_fifo(tmp_path)]
    targets += [p for p in ("/proc/kmsg.png", "/dev/shard-lab.png", "/sys/shard-lab.csv")
                if os.path.isdir(os.path.dirname(p))]
    for p in targets:
        assert w.classroom.export(p) is False
        assert "regular file" in w.classroom.last_error or "system folder" in w.classroom.last_error
    assert not os.path.exists("/dev/shard-lab.png")


def test_the_calibration_dialog_refuses_a_pipe(qtbot, tmp_path):
    from app.classroom.calibration import CalibrationDialog

    dlg = CalibrationDialog()
    qtbot.addWidget(dlg)
    assert dlg.open_nccl_file(_fifo(tmp_path)) is False
    assert "not a regular file" in dlg.status.text()


DIALOG_SCRIPT = r"""
import sys, time
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit
app = QApplication(sys.argv)
from app.main_window import MainWindow
w = MainWindow()  # installs the classroom, and with it the file-dialog guard
dlg = QFileDialog(w, "Open", "/", "All (*)")
dlg.setOption(QFileDialog.Option.DontUseNativeDialog)
dlg.show()
app.processEvents()
dlg.findChild(QLineEdit, "fileNameEdit").setFocus()  # the user clicks into the name field ...
app.processEvents()
dlg.setDirectory("/proc")  # ... and goes to /proc: the dialog lists kmsg and names its type
t0 = time.time()
while time.time() - t0 < 3:
    app.processEvents()
print("still answering")
"""


def test_the_file_dialog_lists_proc_without_reading_kmsg(tmp_path):
    """Qt's file dialog named a file's type by reading it: /proc/kmsg hung the GUI thread (root)."""
    import os
    import subprocess
    import sys

    if not (os.path.exists("/proc/kmsg") and os.access("/proc/kmsg", os.R_OK)):
        pytest.skip("needs a readable /proc/kmsg (Linux, root)")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run([sys.executable, "-c", DIALOG_SCRIPT], capture_output=True, text=True, env=env,
                             cwd=root, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the file dialog blocked the GUI thread reading /proc/kmsg")
    assert out.returncode == 0 and "still answering" in out.stdout, out.stderr
