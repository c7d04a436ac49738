"""benchmarks/run.py runs and writes the issue's figure names (no timing is asserted: tests never time)."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_run_writes_the_named_figures(tmp_path):
    out = tmp_path / "b.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--only",
                           "engine_vs_memcpy_ratio,messages_per_s", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"engine_vs_memcpy_ratio", "messages_per_s"}
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
    assert "engine_vs_memcpy_ratio" in proc.stdout and "goal" in proc.stdout


def test_unknown_figure_is_a_clear_usage_error():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--only", "frame_fps"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown figure(s) frame_fps" in proc.stderr


def test_engine_at_scale_figures_are_written(tmp_path):
    out = tmp_path / "b.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--only",
                           "cost_ratio_n256_n16", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"cost_ratio_n256_n16", "messages_per_s_n256", "trace_bytes_per_message_n512",
                            "chrome_bytes_per_slice_n256", "chrome_export_ratio_n256"}
    assert all(isinstance(v, float) and v > 0 for v in figures.values())


def test_machine_figures_are_written(tmp_path):
    """A machine's messages per second (dgx-h100 n = 256, tpu-v4 4x4x4) and its cost per
    message over the switch path's, measured in the same run."""
    out = tmp_path / "b.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--only",
                           "machine_cost_ratio_vs_switch", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"machine_messages_per_s_dgx_n256", "machine_messages_per_s_torus_4x4x4",
                            "machine_messages_per_s_dgx_rings_n256", "machine_cost_ratio_vs_switch"}
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
    assert "130560 messages" in proc.stdout  # hierarchical all-reduce over 32 nodes of 8
    assert "all-reduce 1044480 in" not in proc.stdout and "(1044480 in" in proc.stdout  # the channel rings' all-reduce
