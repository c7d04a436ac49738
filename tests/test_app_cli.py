"""shard-lab's command line: screenshots for slides (exit 0), one clear line and exit 2 for bad values."""

import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from app.__main__ import main


def _colours(img, step=13):
    return {img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)}


def test_screenshot_in_a_fresh_process_without_a_display(tmp_path):
    """What a lecturer runs: no QT_QPA_PLATFORM, no DISPLAY — it must go offscreen by itself."""
    path = tmp_path / "a.png"
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([sys.executable, "-m", "app", "--scenario", "all-gather", "--n", "8", "--step", "3",
                          "--screenshot", str(path)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    img = QImage(str(path))
    assert img.width() >= 1280 and img.height() >= 720
    assert len(_colours(img)) > 12


@pytest.mark.parametrize("args", [
    ["--n", "64", "--step", "20"],
    ["--scenario", "all-reduce", "--algo", "innet", "--n", "5", "--step", "2", "--size", "1280x720"],
    ["--scenario", "matmul-1", "--n", "4"],
    ["--scenario", "matmul-3", "--algo", "rd", "--n", "4", "--step", "1"],
])
def test_screenshot_states_render_and_exit_zero(qapp, tmp_path, args):
    path = tmp_path / "s.png"
    assert main([*args, "--screenshot", str(path)]) == 0
    img = QImage(str(path))
    want = (1280, 720) if "--size" in args else (1600, 900)
    assert (img.width(), img.height()) == want
    assert len(_colours(img)) > 12


def test_screenshots_of_different_steps_differ_in_the_ring(qapp, tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert main(["--step", "1", "--screenshot", str(a)]) == 0
    assert main(["--step", "6", "--screenshot", str(b)]) == 0
    ia, ib = QImage(str(a)), QImage(str(b))
    # the centre of the window (the ring) changes; the menu bar does not
    centre = [(x, y) for x in range(500, 1100, 7) for y in range(250, 650, 7)]
    assert sum(ia.pixel(x, y) != ib.pixel(x, y) for x, y in centre) > 50
    assert all(ia.pixel(x, 5) == ib.pixel(x, 5) for x in range(0, 300, 3))


@pytest.mark.parametrize("args, words", [
    (["--n", "0"], "at least 1"),
    (["--n", "eight"], "invalid int value"),
    (["--scenario", "all-to-one"], "invalid choice"),
    (["--scenario", "all-gather", "--algo", "rd"], "unknown all-gather algorithm 'rd'; choose one of ring, direct"),
    (["--scenario", "matmul-1", "--algo", "rd"], "ring algorithm only"),
    (["--scenario", "all-gather", "--n", "3", "--bytes", "1000"], "cannot be split into 3"),
    (["--bytes", "lots"], "cannot read a size"),
    (["--link", "smoke-signals"], "unknown link"),
    (["--machine", "cray-1"], "unknown hardware preset"),
    (["--scenario", "all-reduce", "--machine", "dgx-h100", "--n", "12"], "no group of 12"),
    (["--step", "99"], "has 7 steps"),
    (["--step", "-1"], "count from 0"),
    (["--size", "640x480", "--screenshot", "x.png"], "at least 1280x720"),
    (["--lang", "fr"], "invalid choice"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_bad_values_print_one_line_and_exit_2(qapp, capsys, args, words):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("shard-lab: error:") and words in err[0]


def test_a_machine_by_name_runs_its_own_algorithm(qapp, tmp_path, monkeypatch):
    from simcore.topology_presets import offered_algos

    from app import state

    seen, init = [], state.ScenarioModel.__init__
    monkeypatch.setattr(state.ScenarioModel, "__init__",
                        lambda self, sc=None, *a, **k: (seen.append(sc), init(self, sc, *a, **k))[1])
    assert main(["--scenario", "all-reduce", "--machine", "dgx-h100", "--n", "16",
                 "--screenshot", str(tmp_path / "m.png")]) == 0
    assert (tmp_path / "m.png").exists()
    sc = seen[0]  # the window was made from the machine's scenario, with its own choice for the size
    assert sc.topology == "dgx-h100" and sc.n == 16 and sc.algo in offered_algos("dgx-h100", 16, "all-reduce")
    from simcore.topology_presets import PRESETS
    assert sc.algo == PRESETS["dgx-h100"].topology(16).choose("all-reduce", sc.nbytes)[0]


def test_default_size_adapts_to_n_but_an_explicit_one_does_not(qapp, tmp_path):
    assert main(["--n", "3", "--screenshot", str(tmp_path / "a.png")]) == 0
    assert main(["--n", "3", "--bytes", "1MiB", "--screenshot", str(tmp_path / "b.png")]) == 2


@pytest.mark.parametrize("args, tab", [
    (["--scenario", "tp-forward", "--n", "8"], "weights"),
    (["--scenario", "decode", "--n", "4"], "latency"),
    (["--scenario", "reduce-scatter", "--n", "8", "--step", "3", "--tab", "buffers"], "buffers"),
])
def test_screenshots_of_the_other_views(qapp, tmp_path, monkeypatch, args, tab):
    """`--scenario tp-forward` / `decode` open on their views; `--tab` picks any view for a slide."""
    from app.main_window import MainWindow

    shown = []
    real = MainWindow.save_screenshot

    def spy(self, p):
        shown.append(self.current_tab())
        return real(self, p)

    monkeypatch.setattr(MainWindow, "save_screenshot", spy)
    path = tmp_path / "v.png"
    assert main([*args, "--screenshot", str(path)]) == 0
    assert shown == [tab]
    img = QImage(str(path))
    assert len(_colours(img)) > 12


def test_missing_x11_libraries_are_named_instead_of_a_qt_abort(monkeypatch, capsys):
    import ctypes

    from app import __main__ as cli

    real = ctypes.CDLL

    def fake(name, *a, **k):
        if name in ("libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
            raise OSError(f"{name}: cannot open shared object file")
        return real(name, *a, **k) if name not in cli.XCB_LIBS else object()

    monkeypatch.setattr(ctypes, "CDLL", fake)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    assert main(["--n", "4"]) == 1
    err = capsys.readouterr().err
    assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in err
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # offscreen needs none of them
    assert cli._missing_system_library() is None


# ---------------------------------------------------------------------------------------
# shard-lab FILE.json: open a saved scenario from the command line
# ---------------------------------------------------------------------------------------
def _saved(tmp_path, step=None):
    from app import scenario_io
    from app.state import Scenario

    path = tmp_path / "lecture.json"
    scenario_io.save_scenario(str(path), Scenario("all-reduce", 4, "rd", 4096.0, "nvlink3"), step=step)
    return str(path)


def test_a_saved_scenario_opens_from_the_command_line(qapp, tmp_path, monkeypatch):
    monkeypatch.setenv("SHARD_LAB_SETTINGS", str(tmp_path / "s.ini"))
    path = _saved(tmp_path)
    a, b = tmp_path / "from-file.png", tmp_path / "from-flags.png"
    assert main([path, "--screenshot", str(a)]) == 0
    assert main(["--scenario", "all-reduce", "--algo", "rd", "--n", "4", "--bytes", "4096", "--link", "nvlink3",
                 "--screenshot", str(b)]) == 0
    assert QImage(str(a)) == QImage(str(b))  # the same scenario, drawn the same
    c = tmp_path / "default.png"
    assert main(["--screenshot", str(c)]) == 0
    assert QImage(str(a)) != QImage(str(c))


def test_a_saved_step_is_where_the_file_opens(qapp, tmp_path, monkeypatch):
    monkeypatch.setenv("SHARD_LAB_SETTINGS", str(tmp_path / "s.ini"))
    a, b = tmp_path / "step0.png", tmp_path / "step2.png"
    assert main([_saved(tmp_path), "--screenshot", str(a)]) == 0
    assert main([_saved(tmp_path, step=2), "--screenshot", str(b)]) == 0
    assert QImage(str(a)) != QImage(str(b))


@pytest.mark.parametrize("content, words", [
    (b"hello, not json", "not valid JSON"),
    (b"[" * 30000 + b"]" * 30000, "nested far too deeply"),
    (b'{"schema": "something-else"}', "not a Shard Lab scenario"),
    (None, "Cannot read"),
])
def test_a_file_that_is_not_a_scenario_is_one_line_and_exit_2(qapp, capsys, tmp_path, content, words):
    path = tmp_path / "x.json"
    if content is not None:
        path.write_bytes(content)
    assert main([str(path), "--screenshot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shard-lab: error:") and words in err[0], err
    assert not (tmp_path / "x.png").exists()


def test_a_file_and_scenario_options_together_are_refused(qapp, capsys, tmp_path):
    assert main([_saved(tmp_path), "--n", "8"]) == 2
    assert "drop --n" in capsys.readouterr().err


def test_a_broken_file_in_a_fresh_process_prints_no_traceback(tmp_path):
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 30000 + b"]" * 30000)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    out = subprocess.run([sys.executable, "-m", "app", str(path), "--screenshot", str(tmp_path / "x.png")],
                         capture_output=True, text=True, env=env, timeout=300,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    lines = [ln for ln in out.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert out.returncode == 2 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
