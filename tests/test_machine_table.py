"""tools/machine_table.py runs and writes one row per size for every preset, and
docs/machine_table.md is its current output."""

import os
import runpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_machine_table_prints_every_preset_and_size(capsys):
    tool = runpy.run_path(os.path.join(ROOT, "tools", "machine_table.py"), run_name="machine_table")
    tool["main"]()
    text = capsys.readouterr().out
    per_machine = text.split("hierarchical all-reduce by name")[0]
    assert per_machine.count("| 8 B |") == len(tool["MACHINES"]) == per_machine.count("| 8 GiB |")
    for name in ("DGX H100, n = 8", "DGX H100, n = 16", "DGX H100, n = 32", "GB200 NVL72, n = 72",
                 "TPU v5e 16x16", "TPU v4 4x4x4"):
        assert name in text
    big = tool["rows"]("dgx-h100", 8)[-1]  # 8 GiB on one node: NVLS, busbw NCCL's 370.8 GB/s
    assert big[1:3] == ("innet", "Simple") and abs(big[5] / 370.8e9 - 1) < 0.01
    # two nodes: NCCL's NVLS Tree (the registry's hier) from 1 MiB, bus bandwidth → 8 × 57.7 GB/s
    two = tool["rows"]("dgx-h100", 16)
    assert [r[1] for r in two] == ["ring-nodes"] * 3 + ["hier"] * 5
    assert abs(two[-1][5] / 461.6e9 - 1) < 0.01
    # every published run is in the table beside the model's figure and its source
    assert text.count("NVIDIA/nccl#") >= len(tool["PUBLIC"])
    with open(os.path.join(ROOT, "docs", "machine_table.md"), encoding="utf-8") as f:
        assert f.read() == text  # the committed table is the tool's output (regenerate it when this fails)
