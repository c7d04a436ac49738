"""
Still exports and animation exports: "Current frame as PNG/SVG"
writes the 1280×720 picture of the ring view (the same picture as the GIF frame of that
moment), not the window; a GIF is streamed to its file frame by frame; closing the window
during an export cancels it and then closes.
"""

import glob
import os
import re

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("PIL")

from PIL import Image, ImageSequence  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _gif_frames(path):
    with Image.open(path) as im:
        return [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(im)]


@pytest.mark.parametrize("kind, n", [("all-gather", 4), ("all-reduce", 8)])
def test_current_frame_png_is_the_gif_frame_of_that_moment(qtbot, tmp_path, kind, n):
    w = make_window(qtbot, kind, n)
    c = w.classroom
    assert c.export_animation(str(tmp_path / "a.gif"), frames_per_step=1)
    frames = _gif_frames(tmp_path / "a.gif")  # frame k: the state after step k (frame 0: the start)
    k = 2
    w.playback.seek(w.playback.stops[k])
    assert c.export(str(tmp_path / "still.png"))
    with Image.open(tmp_path / "still.png") as im:
        assert im.size == (1280, 720)  # the slide, not the 1600×900 window with its menus and docks
        png = np.asarray(im.convert("RGB")).astype(int)
    # a GIF frame has its own 256-colour palette: flat areas keep their colour, a few antialiased
    # edge pixels move to the nearest palette entry. The window instead would differ everywhere.
    diff = np.abs(png - frames[k]).max(axis=2)
    assert diff.mean() < 1.0
    assert (diff > 24).mean() < 0.005


def test_current_frame_svg_is_the_slide_not_the_window(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.export(str(tmp_path / "still.svg"))
    svg = (tmp_path / "still.svg").read_text(encoding="utf-8")
    assert re.search(r'viewBox="0 0 1280 720"', svg)
    assert "GPU 7" in svg
    for window_text in ("What happens in this step", "Closed form", "Scenario", "Playback"):
        assert window_text not in svg  # docks and menus are not part of the frame


def test_gif_is_streamed_to_its_file_frame_by_frame(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    sizes = []

    def progress(done, total):
        sizes.append(sum(os.path.getsize(p) for p in glob.glob(str(tmp_path / ".shard-lab-*.gif"))))
        return True

    assert w.classroom.export_animation(str(tmp_path / "a.gif"), progress=progress, frames_per_step=2)
    # the temporary file grows while frames are drawn: nothing waits in memory for the end
    assert sizes[3] > sizes[1] > 0
    assert len(_gif_frames(tmp_path / "a.gif")) == len(sizes) - 1


def _answer(w, button):
    """Click `button` of the question a close during an export asks (it is there, not modal)."""
    from PySide6.QtWidgets import QMessageBox

    box = w.findChild(QMessageBox, "cancelExportQuestion")
    assert box is not None and box.isVisible() and not box.isModal()
    (b,) = [b for b in box.buttons() if b.text() == button]
    b.click()


def test_closing_the_window_during_an_export_asks_and_keeping_it_goes_on(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    seen = []

    def progress(done, total):
        seen.append((done, total))
        if done == 1:
            w.close()
            _answer(w, "Keep exporting")
        return True

    assert w.classroom.export_animation(str(tmp_path / "a.gif"), progress=progress, frames_per_step=1)
    assert seen[-1][0] == seen[-1][1]  # every frame was written
    assert (tmp_path / "a.gif").exists() and w.isVisible()  # and the window stayed open


def test_a_close_asked_while_the_export_ends_closes_the_window(qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    w = make_window(qtbot, "all-gather", 4)

    def progress(done, total):
        if done == 1:
            w.close()  # asked, and not answered before the last frame
        return True

    assert w.classroom.export_animation(str(tmp_path / "a.gif"), progress=progress, frames_per_step=1)
    assert (tmp_path / "a.gif").exists()
    qtbot.waitUntil(lambda: not w.isVisible())  # the close the user asked for happens
    assert not [b for b in w.findChildren(QMessageBox, "cancelExportQuestion") if b.isVisible()]


def test_closing_the_window_during_an_export_cancels_it_and_closes(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 8)
    seen = []

    def progress(done, total):
        seen.append(done)
        if done == 3:
            w.close()  # the user closes the window while frames are being drawn …
            _answer(w, "Cancel export and close")  # … and, asked, cancels the export
        return True

    assert not w.classroom.export_animation(str(tmp_path / "a.gif"), progress=progress)
    assert max(seen) <= 4  # stopped at the next frame, not after all of them
    assert not os.listdir(tmp_path / ".") or not glob.glob(str(tmp_path / "*.gif"))
    assert not glob.glob(str(tmp_path / ".shard-lab-*"))  # no temporary file left either
    qtbot.waitUntil(lambda: not w.isVisible())  # and the window does close
    QApplication.processEvents()


def test_during_an_export_from_the_menu_nothing_blocks_the_window_from_closing(qtbot, tmp_path, monkeypatch):
    """Qt drops a window-system close for a window a modal dialog blocks: the export's progress
    dialog must not be modal; the window's controls are disabled instead, and a close cancels."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QFileDialog

    w = make_window(qtbot, "all-gather", 8)
    path = tmp_path / "a.gif"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "")))
    seen = {}

    def during_export():
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QProgressDialog

        progress = w.findChild(QProgressDialog, "exportProgress")
        seen["modal"] = QApplication.modalWindow() or (progress.windowModality() != Qt.NonModal)
        seen["controls"] = w.controls_dock.isEnabled() or w.act_play.isEnabled() or w.menuBar().isEnabled()
        seen["window"] = w.isEnabled()
        w.close()  # what the title bar's close button does once it gets through
        _answer(w, "Cancel export and close")

    QTimer.singleShot(0, during_export)  # runs inside the export's event processing
    w.classroom.act_export_gif.trigger()
    assert seen == {"modal": False, "controls": False, "window": True}
    assert not path.exists()
    qtbot.waitUntil(lambda: not w.isVisible())
