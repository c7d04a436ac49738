"""benchmarks/mesh.py runs and writes its figures (no timing is asserted: tests never time)."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_mesh_benchmark_writes_its_figures(tmp_path):
    out = tmp_path / "m.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "mesh.py"), "--repeats", "1",
                           "--json", str(out)], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"mesh_redistribute_messages_per_s", "mesh_redistribute_cost_ratio",
                            "mesh_redistribute_axis_messages_per_s", "mesh_redistribute_axis_cost_ratio",
                            "mesh_redistribute_2axis_messages_per_s", "mesh_reduce_scatter_messages_per_s"}
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
    assert "65280 messages" in proc.stdout and "goal" in proc.stdout


def test_the_mesh_view_frame_benchmark_writes_its_figures(tmp_path):
    out = tmp_path / "f.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "mesh.py"), "--frames", "--frames-n", "12",
                           "--json", str(out)], capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=env)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"mesh_view_frame_ms_p50", "mesh_view_frame_ms_p95", "mesh_view_frame_cpu_ms_p50",
                            "mesh_view_frame_cpu_ms_p95"}
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
