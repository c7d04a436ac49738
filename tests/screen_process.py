"""Run a Qt script in its own process on an offscreen screen of a given size (the offscreen platform
takes its screen size at start-up, so each size needs a process) and read the one JSON line it
prints after "RESULT "."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_on_screen(tmp, W: int, H: int, script: str) -> dict:
    """The RESULT of `script` run on a W×H offscreen screen, with its own settings file in `tmp`."""
    cfg = tmp / "screen.json"
    cfg.write_text(json.dumps({"synchronousWindowSystemEvents": True, "windowFrameMargins": False,
                               "screens": [{"name": "hall", "x": 0, "y": 0, "width": W, "height": H,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", PYTHONPATH=ROOT,
               SHARD_LAB_SETTINGS=str(tmp / "settings.ini"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    return json.loads(line[len("RESULT "):])
