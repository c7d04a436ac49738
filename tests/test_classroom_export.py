"""Exports: GIF / MP4 frames and size, PNG, SVG as valid XML, Chrome trace and CSV, cancel and bad paths."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("pytestqt")
iio = pytest.importorskip("imageio.v3")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QProgressDialog  # noqa: E402

from app.classroom import export  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _leftovers(folder):
    return [f for f in os.listdir(folder) if f.startswith(".shard-lab-")]


def test_frame_plan_one_frame_per_step(qtbot):
    w = make_window(qtbot, "all-gather", 4)
    trace = w.model.run.trace
    plan = export.frame_plan(trace, frames_per_step=1)
    ends = [t1 for _t0, t1 in trace.step_times(0)]
    assert [f.t for f in plan] == [0.0] + ends  # the initial state, then the end of every step
    assert all(f.step_end for f in plan)


def test_gif_of_ring_allgather_n4_has_one_frame_per_step_and_slide_size(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    w.playback.seek_step(2)
    t_before = w.playback.t
    path = tmp_path / "ag.gif"
    n = export.export_animation(w, str(path), frames_per_step=1)
    frames = iio.imread(path, index=None)
    assert n == 4 == frames.shape[0]  # initial state + 3 ring steps (n - 1)
    assert frames.shape[1:] == (720, 1280, 3)  # SLIDE_SIZE, whatever the window's size
    # every step changes the picture (the buffers fill up)
    diffs = [np.abs(frames[i + 1].astype(int) - frames[i].astype(int)).mean() for i in range(3)]
    assert min(diffs) > 0.1
    assert w.playback.t == t_before  # the export put the clock back
    assert _leftovers(tmp_path) == []


def test_gif_at_a_frame_rate_holds_each_step(qtbot, tmp_path):
    from PIL import Image

    w = make_window(qtbot, "reduce-scatter", 4)
    path = tmp_path / "rs.gif"
    n = export.export_animation(w, str(path), fps=10, frames_per_step=4, hold=0.5)
    assert n == 1 + 3 * 4
    with Image.open(path) as im:
        assert im.n_frames == n
        durations = []
        for i in range(n):
            im.seek(i)
            durations.append(im.info["duration"])
    assert durations[0] == 500 and durations[1:4] == [100, 100, 100] and durations[4] == 500


def test_mp4_has_the_planned_frames(qtbot, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as iio2

    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / "ag.mp4"
    export.export_animation(w, str(path), fps=5, frames_per_step=2, hold=0.4)
    plan = export.frame_plan(w.model.run.trace, frames_per_step=2, fps=5, hold=0.4)
    want = sum(max(1, round(f.duration * 5)) for f in plan)
    reader = iio2.get_reader(str(path), format="FFMPEG")
    try:
        count = sum(1 for _ in reader)
        first = reader.get_data(0)
    finally:
        reader.close()
    assert count == want
    assert first.shape == (720, 1280, 3)


def test_png_and_svg_of_the_current_frame(qtbot, tmp_path):
    w = make_window(qtbot, "reduce-scatter", 4)
    w.playback.seek_step(1)
    png, svg = tmp_path / "f.png", tmp_path / "f.svg"
    export.export_frame(w, str(png))
    export.export_frame(w, str(svg))
    img = QImage(str(png))
    assert (img.width(), img.height()) == export.SLIDE_SIZE
    root = ET.parse(svg).getroot()  # valid XML
    assert root.tag.endswith("svg")
    assert root.get("viewBox").split() == ["0", "0", "1280", "720"]
    assert len(list(root.iter())) > 50  # the drawing, not an empty page
    assert "GPU 0" in svg.read_text(encoding="utf-8")  # text stays text


def test_chrome_trace_parses_and_csv_has_a_row_per_message(qtbot, tmp_path):
    w = make_window(qtbot, "all-reduce", 4, "ring")
    trace = w.model.run.trace
    cj, cv = tmp_path / "t.json", tmp_path / "t.csv"
    export.export_trace_chrome(trace, str(cj))
    export.export_trace_csv(trace, str(cv))
    events = json.loads(cj.read_text())["traceEvents"]
    assert sum((e.get("cat"), e.get("tid")) == ("comm", 1) for e in events) == len(trace.messages) == 2 * 4 * 3
    assert {e["pid"] for e in events if (e.get("cat"), e.get("tid")) == ("comm", 1)} == {0, 1, 2, 3}
    lines = cv.read_text().splitlines()
    assert len(lines) == 1 + len(trace.messages)


def test_cancelling_the_progress_dialog_leaves_no_file(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    dlg = QProgressDialog(w)
    dlg.setWindowModality(dlg.windowModality().WindowModal)
    qtbot.addWidget(dlg)
    QTimer.singleShot(0, dlg.cancel)  # "Cancel" clicked while the first frames are drawn
    path = tmp_path / "cancel.gif"
    with pytest.raises(export.ExportCancelled):
        export.export_animation(w, str(path), progress=dlg)
    assert not path.exists()
    assert _leftovers(tmp_path) == []


def test_cancel_keeps_an_existing_file_untouched(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / "old.mp4"
    path.write_bytes(b"the lecturer's old video")
    seen = []

    def progress(done, total):
        seen.append(done)
        return done < 3  # cancel at the fourth frame

    with pytest.raises(export.ExportCancelled):
        export.export_animation(w, str(path), progress=progress)
    assert seen[-1] == 3
    assert path.read_bytes() == b"the lecturer's old video"
    assert _leftovers(tmp_path) == []


def test_unwritable_paths_get_a_clear_message_and_no_file(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    missing = tmp_path / "no such folder" / "a.gif"
    with pytest.raises(export.ExportError, match="does not exist"):
        export.export_animation(w, str(missing))
    with pytest.raises(export.ExportError, match="is a folder"):
        export.export_trace_csv(w.model.run.trace, str(tmp_path))
    with pytest.raises(export.ExportError, match=r"\.gif or \.mp4"):
        export.export_animation(w, str(tmp_path / "a.avi"))
    assert not missing.parent.exists()
    assert _leftovers(tmp_path) == []


def test_a_failing_writer_leaves_nothing_half_written(tmp_path):
    path = tmp_path / "x.csv"

    def write(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(export.ExportError, match="No space left"):
        export.atomic_write(str(path), write)
    assert os.listdir(tmp_path) == []


def test_classroom_menu_exports_report_errors_without_blocking(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    c = w.classroom
    assert c.export(str(tmp_path / "t.csv"))
    assert not c.export(str(tmp_path / "nowhere" / "t.json"))
    assert "does not exist" in c.last_error
    box = w.findChild(QMessageBox, "classroomError")  # shown without blocking: the test goes on
    assert box is not None and "does not exist" in box.text()
    assert not c.export_animation(str(tmp_path / "x.gif"), progress=lambda d, t: d < 1)
    assert not (tmp_path / "x.gif").exists()
    assert "cancelled" in w.statusBar().currentMessage()


def test_cli_exports_a_gif_headless(tmp_path):
    path = tmp_path / "rs.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    out = subprocess.run([sys.executable, "-m", "app", "--scenario", "reduce-scatter", "--n", "4",
                          "--export-gif", str(path), "--frames-per-step", "2"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    frames = iio.imread(path, index=None)
    assert frames.shape == (1 + 3 * 2, 720, 1280, 3)
    bad = subprocess.run([sys.executable, "-m", "app", "--export-gif", str(tmp_path / "nope" / "a.gif")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 1 and "does not exist" in bad.stderr


@pytest.mark.parametrize("kind", ["png", "svg", "gif", "json", "csv"])
def test_file_menu_exports_write_what_they_say(qtbot, tmp_path, monkeypatch, kind):
    from PySide6.QtWidgets import QFileDialog

    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / f"out.{kind}"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "")))
    c = w.classroom
    act = {"png": c.act_export_png, "svg": c.act_export_svg, "gif": c.act_export_gif,
           "json": c.act_export_chrome, "csv": c.act_export_csv}[kind]
    act.trigger()
    assert path.exists() and path.stat().st_size > 0
    assert str(path) in w.statusBar().currentMessage()
