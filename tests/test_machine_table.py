"""tools/machine_table.py (issue 22's table) runs and writes one row per size for every preset."""

import os
import runpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_machine_table_prints_every_preset_and_size(capsys):
    tool = runpy.run_path(os.path.join(ROOT, "tools", "machine_table.py"), run_name="machine_table")
    tool["main"]()
    text = capsys.readouterr().out
    assert text.count("| 8 B |") == len(tool["MACHINES"]) and text.count("| 8 GiB |") == len(tool["MACHINES"])
    for name in ("DGX H100, n = 8", "DGX H100, n = 16", "GB200 NVL72, n = 72", "TPU v5e 16x16", "TPU v4 4x4x4"):
        assert name in text
    big = tool["rows"]("dgx-h100", 8)[-1]  # 8 GiB on one node: NVLS, busbw NCCL's 370.8 GB/s
    assert big[1:3] == ("innet", "Simple") and abs(big[5] / 370.8e9 - 1) < 0.01
