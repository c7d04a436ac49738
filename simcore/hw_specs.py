"""
hw_specs — accelerator chips as the roofline sees them (lecture 1): peak FLOP/s per precision,
HBM bandwidth and capacity, and the link a chip's tensor-parallel group talks over.

Peak figures are dense (no 2:4 sparsity). A precision a chip has no tensor-core / MXU path
for (fp8 on A100, TPU v4 and TPU v5e) raises ValueError rather than guessing a number: the
chip would run such a model in bf16 (or int8), and the caller should say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRECISIONS = ("bf16", "fp8", "int8")


@dataclass(frozen=True)
class Chip:
    """
    name; flops: precision -> peak dense FLOP/s (int8: OP/s); mem_bw: HBM bytes/s;
    hbm_bytes: HBM capacity in bytes; link: key of comm_sim.LINKS for its scale-up network;
    n_links, link_bw: number of links and bytes/s per link per direction (informational).
    """

    name: str
    flops: dict = field(hash=False)
    mem_bw: float
    hbm_bytes: float
    link: str
    n_links: int = 1
    link_bw: float = 0.0

    def peak_flops(self, prec: str = "bf16") -> float:
        """Peak dense FLOP/s at precision `prec` ('bf16', 'fp8' or 'int8')."""
        if prec not in PRECISIONS:
            raise ValueError(f"unknown precision {prec!r}; choose one of {', '.join(PRECISIONS)}")
        if prec not in self.flops:
            have = ", ".join(self.flops)
            raise ValueError(f"{self.name} has no {prec} peak (no hardware path); it supports {have}")
        return self.flops[prec]

    @property
    def hbm(self) -> float:
        """HBM capacity in bytes (alias of hbm_bytes)."""
        return self.hbm_bytes


T = 1e12
GB = 1e9
GiB = 2 ** 30

# NVIDIA A100 SXM 80GB datasheet: 312 TFLOP/s bf16, 624 TOPS int8 (dense), 2,039 GB/s, 80 GB.
# Ampere has no fp8. NVLink 3: 12 links, 600 GB/s total = 300 GB/s per direction per GPU.
A100 = Chip("A100 SXM 80GB", {"bf16": 312 * T, "int8": 624 * T}, mem_bw=2.039e12, hbm_bytes=80 * GB,
            link="nvlink3", n_links=12, link_bw=25 * GB)
# NVIDIA H100 SXM datasheet: 989 TFLOP/s bf16, 1,979 fp8 and int8 (dense), 3.35 TB/s, 80 GB.
# NVLink 4: 18 links, 900 GB/s total = 450 GB/s per direction.
H100 = Chip("H100 SXM", {"bf16": 989 * T, "fp8": 1979 * T, "int8": 1979 * T}, mem_bw=3.35e12,
            hbm_bytes=80 * GB, link="nvlink4", n_links=18, link_bw=25 * GB)
# NVIDIA H200 datasheet: 989 TFLOP/s bf16, 1,979 fp8, int8 1,979 TOPS (3,958 with sparsity),
# 4.8 TB/s, 141 GB. Same NVLink 4 as H100.
H200 = Chip("H200 SXM", {"bf16": 989 * T, "fp8": 1979 * T, "int8": 1979 * T}, mem_bw=4.8e12,
            hbm_bytes=141 * GB, link="nvlink4", n_links=18, link_bw=25 * GB)
# NVIDIA HGX B200 datasheet (per GPU, dense): 2,250 TFLOP/s bf16, 4,500 fp8 and int8, 8 TB/s, 180 GB.
# NVLink 5: 18 links, 1.8 TB/s total = 900 GB/s per direction.
B200 = Chip("B200 (HGX)", {"bf16": 2250 * T, "fp8": 4500 * T, "int8": 4500 * T}, mem_bw=8e12,
            hbm_bytes=180 * GB, link="nvlink5", n_links=18, link_bw=50 * GB)
# NVIDIA GB200 NVL72 datasheet, rack totals divided by its 72 GPUs: 360 PFLOPS fp16/bf16 and 720
# PFLOPS fp8 / 720 POPS int8 with sparsity (dense: half), 13.4 TB HBM3e at 576 TB/s;
# NVLink 5: 18 links, 1.8 TB/s total = 900 GB/s per direction, all 72 GPUs in one NVLink domain.
GB200 = Chip("GB200 (NVL72)", {"bf16": 2500 * T, "fp8": 5000 * T, "int8": 5000 * T}, mem_bw=8e12,
             hbm_bytes=186 * GB, link="nvlink5", n_links=18, link_bw=50 * GB)
# Google Cloud TPU docs, v4: 275 TFLOP/s bf16 and 275 TOPS int8, 1,200 GB/s, 32 GiB HBM;
# ICI 45 GB/s per link one way, 6 links (3D torus). No fp8.
TPU_V4 = Chip("TPU v4", {"bf16": 275 * T, "int8": 275 * T}, mem_bw=1.2e12, hbm_bytes=32 * GiB,
              link="tpu-v4-ici", n_links=6, link_bw=45 * GB)
# Google Cloud TPU docs, v5e: 197 TFLOP/s bf16, 394 TOPS int8, 819 GB/s, 16 GB HBM;
# ICI 45 GB/s per link one way, 4 links (2D torus). No fp8.
TPU_V5E = Chip("TPU v5e", {"bf16": 197 * T, "int8": 394 * T}, mem_bw=819e9, hbm_bytes=16 * GB,
               link="tpu-v5e-ici", n_links=4, link_bw=45 * GB)

CHIPS = {"a100": A100, "h100": H100, "h200": H200, "b200": B200, "gb200": GB200, "tpu-v4": TPU_V4,
         "tpu-v5e": TPU_V5E}
