"""The first window's modules leave out what it does not show: those are imported on first use
(benchmarks/run.py's startup_ratio). One subprocess, so this process's imports do not count."""

import os
import subprocess
import sys

# Modules the first window (ring view, controls, explanation, formula) never needs: each is
# imported by the code that first uses it (a tab shown, a dialog opened, a matmul scenario, the
# timeline built after the first paint, an MPI measurement).
DEFERRED = ("app.views.ring.matmul_view", "app.views.timeline.timeline", "app.views.timeline.step_timeline", "app.core.step_timeline_model", "app.views.timeline.step_timeline_texts",
            "app.views.timeline.step_timeline_items", "app.views.timeline.step_timeline_dialog", "app.views.weights.weights_view", "app.views.buffers.buffer_view",
            "app.views.latency.latency_view", "app.classroom.calibration", "app.classroom.export", "pyqtgraph", "simcore.mpi",
            "simcore.topo_collectives", "simcore.step_sim", "simcore.transformer_lab", "simcore.trace_io",
            "app.classroom.predict_ui", "app.core.predict")


def test_the_first_windows_modules_import_none_of_the_deferred_ones():
    code = ("import sys\n"
            "import app.main_window, app.classroom.classroom, app.classroom.presentation, app.tabs\n"
            f"print(','.join(m for m in {DEFERRED!r} if m in sys.modules))\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         timeout=60)
    assert out.stdout.strip() == "", f"imported at startup: {out.stdout.strip()}"
