"""
links — the links a simulated machine is built of: LinkSpec (α, β of one port) and the presets
(NVLink, PCIe, TPU ICI, InfiniBand) with the sources of their numbers, LINKS by key, and NCCL's
per-collective base latency. Re-exported by simcore.comm_sim, the engine's public face.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class LinkSpec:
    """One port's link. alpha: latency, s per message; bw: bytes/s per direction."""

    name: str
    alpha: float
    bw: float

    def __post_init__(self):
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise ValueError(f"link alpha must be a finite number >= 0 seconds, got {self.alpha!r}")
        if not (self.bw > 0 and math.isfinite(self.bw)):
            raise ValueError(f"link bandwidth must be a finite number > 0 bytes/s, got {self.bw!r}")


# Bandwidths: per GPU, per direction — "How to Scale Your Model", GPU chapter
# (NVLink 3 / 4 / 5: 300 / 450 / 900 GB/s).
# alpha: NCCL's per-step NVLink ring latency for the LL128 protocol, 1.9 µs
# (NVIDIA/nccl src/graph/tuning.cc, hwLat[NVLINK][RING] = {LL .6, LL128 1.9, Simple 3.4}).
NVLINK3 = LinkSpec("NVLink 3 (A100)", alpha=1.9e-6, bw=300e9)
NVLINK4 = LinkSpec("NVLink 4 (H100)", alpha=1.9e-6, bw=450e9)
NVLINK5 = LinkSpec("NVLink 5 (B200)", alpha=1.9e-6, bw=900e9)
# PCIe x16 per direction: 4.0 = 16 GT/s x 16 lanes x 128/130 ≈ 31.5 GB/s; 5.0 doubles it
# (PCI-SIG specifications). alpha: NCCL tuning.cc hwLat[PCI][RING] Simple, 5.7 µs.
PCIE4 = LinkSpec("PCIe 4.0 x16", alpha=5.7e-6, bw=31.5e9)
PCIE5 = LinkSpec("PCIe 5.0 x16", alpha=5.7e-6, bw=63.0e9)
# TPU ICI: 45 GB/s per link, one way (Google Cloud TPU docs, v4 and v5e); alpha ≈ 1 µs per
# hop ("How to Scale Your Model", TPU chapter). A TPU chip has several ICI links — v4 six
# (a 3-D torus, ±1 on each axis), v5e four (2-D) — and this preset is ONE of them: on a
# switch(n, TPU_V4_ICI) a ring uses one link in one direction; torus(shape, link) gives
# every chip its links to ±1 on each axis.
TPU_V4_ICI = LinkSpec("TPU v4 ICI link", alpha=1e-6, bw=45e9)
TPU_V5E_ICI = LinkSpec("TPU v5e ICI link", alpha=1e-6, bw=45e9)
# InfiniBand NDR 400 Gb/s, one NIC per GPU (DGX H100: 8 ConnectX-7): 400 Gb/s = 50 GB/s per
# direction (InfiniBand Trade Association NDR rate). alpha: NCCL's per-step network latency for
# the ring, LL128 column as for NVLink above: hwLatencies[NET][RING] = {LL 2.7, LL128 4.0,
# Simple 14.0} µs (NVIDIA/nccl src/graph/tuning.cc; large messages use Simple, 14 µs).
IB_NDR400 = LinkSpec("InfiniBand NDR 400", alpha=4.0e-6, bw=50e9)

LINKS = {
    "nvlink3": NVLINK3, "nvlink4": NVLINK4, "nvlink5": NVLINK5,
    "pcie4": PCIE4, "pcie5": PCIE5,
    "tpu-v4-ici": TPU_V4_ICI, "tpu-v5e-ici": TPU_V5E_ICI,
    "ib-ndr400": IB_NDR400,
}

# Per-collective base latency: what one collective call costs before its first message moves
# (kernel launch, the ranks' handshake), paid once per call, not per step. NCCL's tuning model
# starts every collective's latency at baseLat[algorithm][protocol] and adds hwLat per step
# (NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults.baseLatencies: Ring
# {LL 6.6, LL128 14.0, Simple 8.4} µs). The α of the NVLink and NIC links above is the LL128
# column, so the machines of simcore.topology_presets take the Ring LL128 base, 14.0 µs, for the
# algorithms NCCL's model does not time (rd, one-shot, two-shot, hier); NCCL's own (ring, the
# channel rings, NVLS) run with the protocol NCCL's tuner picks for the size, each with its own
# base and per-step latency (simcore.nccl_tuning). The lecture's plain switch(n, link) has none:
# its collectives keep the textbook closed forms.
NCCL_RING_LL128_BASE = 14.0e-6
