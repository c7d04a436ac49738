"""
topology — the machines a Comm runs on: Switch, Nodes and Torus with their route(), and the
checked constructors switch(), nodes(), torus(). Re-exported by simcore.comm_sim, the engine's
public face.

Topologies. `switch(n, link)`: one non-blocking switch. `nodes(n_nodes, per_node, intra,
inter)`: device d on node d // per_node, a port into its node's switch (intra) and its own NIC
into a non-blocking fabric (inter: a message between nodes uses the NIC ports and inter's α, β).
`torus(shape, link)`: 1-3 axes with wraparound, a full-duplex link to ±1 on each axis, each link
its own port pair; a message may only go to a neighbour. Every collective runs on every
topology whose links can carry its messages; otherwise it raises ValueError naming the
topology and the Comm is left as it was. `Comm(topology)` asks a topology for four things —
the interface other collectives (simcore.topo_collectives) build on, kept stable:
    n               devices 0 .. n−1
    link            the LinkSpec of a device's main port (the one reports print)
    n_ports         port ids are 0 .. n_ports−1, each with a send and a receive side
    route(src, dst) -> (send_port, recv_port, link): the ports a message from src to dst
                    holds and the LinkSpec (α, β) that times it. src or dst may be SWITCH;
                    the switch's side has no port (None). Raises ValueError, naming the
                    topology, when src cannot send to dst directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .links import IB_NDR400, NVLINK4, TPU_V4_ICI, LinkSpec
from .trace import SWITCH

MAX_DEVICES = 4096  # a simulation larger than this is a typo, not a lecture


def _check_count(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"the number of {what} must be a whole number, got {v!r}")
    if v < 1:
        raise ValueError(f"the number of {what} must be at least 1, got {v}")
    return int(v)


def _check_total(n):
    if n > MAX_DEVICES:
        raise ValueError(f"{n} devices is more than this simulator handles (at most {MAX_DEVICES})")


@dataclass(frozen=True)
class Switch:
    """n devices, each on its own full-duplex port (port id = device id) of one non-blocking switch."""

    n: int
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n_ports(self) -> int:
        return self.n

    @property
    def name(self) -> str:
        return f"switch({self.n}, {self.link.name})"

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst; SWITCH's side has no port."""
        return (None if src == SWITCH else src), (None if dst == SWITCH else dst), self.link

    def routes(self, src, dst):
        """route() of many messages at once: (send ports, receive ports, α, β), -1 for no port."""
        return np.where(src == SWITCH, -1, src), np.where(dst == SWITCH, -1, dst), self.link.alpha, self.link.bw


def _check_base(base):
    if isinstance(base, bool) or not (isinstance(base, (int, float, np.floating)) and math.isfinite(base)
                                      and base >= 0):
        raise ValueError(f"a collective's base latency must be a finite number of seconds >= 0, got {base!r}")
    return float(base)


def switch(n, link=NVLINK4, base=0.0) -> Switch:
    """n devices around a non-blocking switch (NVSwitch-like), every port `link`; base: the
    per-collective base latency (0: the textbook closed forms)."""
    n = _check_count(n, "devices")
    _check_total(n)
    return Switch(n, link, _check_base(base))


@dataclass(frozen=True)
class Nodes:
    """
    n_nodes nodes of per_node devices; device d sits on node d // per_node. Inside a node every
    device has its own full-duplex port into the node's non-blocking switch (NVSwitch, `intra`);
    every device also has its own NIC port into a non-blocking fabric between the nodes
    (InfiniBand, one NIC per GPU as in a DGX H100, `inter`). A message between two nodes uses
    the NIC ports and is timed by `inter`'s α and β.
    Port ids: d is device d's port into its node switch, n + d its NIC.
    In-network reduction (SWITCH) is the node switch's (NVLS) on one node and the fabric's
    (InfiniBand SHARP, through each device's NIC) on several.
    """

    n_nodes: int
    per_node: int
    intra: LinkSpec
    inter: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n(self) -> int:
        return self.n_nodes * self.per_node

    @property
    def link(self) -> LinkSpec:
        return self.intra

    @property
    def n_ports(self) -> int:
        return 2 * self.n

    @property
    def name(self) -> str:
        return f"nodes({self.n_nodes} × {self.per_node}, {self.intra.name} inside, {self.inter.name} between)"

    def node(self, d) -> int:
        return d // self.per_node

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst (see the class docstring)."""
        n = self.n
        if src == SWITCH or dst == SWITCH:
            dev = dst if src == SWITCH else src
            port, link = (dev, self.intra) if self.n_nodes == 1 else (n + dev, self.inter)
            return (None, port, link) if src == SWITCH else (port, None, link)
        if src // self.per_node == dst // self.per_node:
            return src, dst, self.intra
        return n + src, n + dst, self.inter


def nodes(n_nodes, per_node, intra=NVLINK4, inter=IB_NDR400, base=0.0) -> Nodes:
    """n_nodes nodes of per_node devices each (e.g. nodes(2, 8): two DGX H100); base: the
    per-collective base latency."""
    m = _check_count(n_nodes, "nodes")
    q = _check_count(per_node, "devices per node")
    _check_total(m * q)
    return Nodes(m, q, intra, inter, _check_base(base))


@dataclass(frozen=True)
class Torus:
    """
    Devices on a 1-, 2- or 3-D torus with wraparound (TPU ICI): device d has coordinates
    np.unravel_index(d, shape) (row-major) and a full-duplex link to its ±1 neighbour on each
    axis, each link its own port pair — a TPU v4 chip's six ICI links, a v5e's four.
    A message may only go to a torus neighbour; anything else raises ValueError.
    Port ids: device d's link in direction dir (0: +1, 1: −1) on axis a is d·2·ndim + 2a + dir.
    On an axis of size 2 both neighbours are the same device; the +1 link is used.
    """

    shape: tuple
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n(self) -> int:
        return math.prod(self.shape)

    @property
    def n_ports(self) -> int:
        return self.n * 2 * len(self.shape)

    @property
    def name(self) -> str:
        return f"torus({'×'.join(map(str, self.shape))}, {self.link.name})"

    def coords(self, d) -> tuple:
        return tuple(int(c) for c in np.unravel_index(d, self.shape))

    def device(self, coords) -> int:
        return int(np.ravel_multi_index(tuple(c % s for c, s in zip(coords, self.shape)), self.shape))

    def neighbour(self, d, axis, step=1) -> int:
        """The device `step` (±1) away from d along `axis`, wrapping around."""
        c = list(self.coords(d))
        c[axis] += step
        return self.device(c)

    def route(self, src, dst):
        """(send port, receive port, link) of a message to a neighbour; ValueError otherwise."""
        if src == SWITCH or dst == SWITCH:
            raise ValueError(f"{self.name} has no switch: in-network reduction needs one (use switch or nodes)")
        cs, cd = self.coords(src), self.coords(dst)
        differ = [a for a in range(len(self.shape)) if cs[a] != cd[a]]
        if len(differ) == 1:
            a = differ[0]
            size = self.shape[a]
            direction = 0 if (cs[a] + 1) % size == cd[a] else 1 if (cs[a] - 1) % size == cd[a] else None
            if direction is not None:
                per = 2 * len(self.shape)
                return src * per + 2 * a + direction, dst * per + 2 * a + (1 - direction), self.link
        raise ValueError(f"{self.name}: device {src} {cs} cannot send to device {dst} {cd}, which is not its torus "
                         f"neighbour (±1 on one axis); this algorithm needs a switch — on a torus use rings "
                         f"along one axis")


def torus(shape, link=TPU_V4_ICI, base=0.0) -> Torus:
    """A torus of `shape` (e.g. (4, 4) for TPU v5e 4×4, (4, 4, 4) for TPU v4), every link `link`."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise ValueError(f"a torus shape is a tuple of 1 to 3 sizes, got {shape!r}") from None
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"a torus has 1, 2 or 3 axes, got shape {shape!r}")
    shape = tuple(_check_count(s, "devices along a torus axis") for s in shape)
    _check_total(math.prod(shape))
    return Torus(shape, link, _check_base(base))
