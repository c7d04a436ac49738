"""
kind_record — what a topology kind is, in one record the app and the engine ask instead of
asking the topology's class: `topo.record` (a KindRecord) on every machine of simcore.topology,
and `record_of(topo)` for any topology a Comm accepts (one of the reader's own, without a
record, is drawn as devices on one switch over its `link`).

A KindRecord holds no words and no Qt: keys the app maps to its translated words.
    kind         the kind's name ("switch", "nodes", "torus" or a new kind's own)
    layout       the family the ring view draws: "switch" (devices round one switch), "nodes"
                 (`nodes` clusters of `per_node` devices round their own switches over a fabric)
                 or "torus" (devices on the grid `grid`, wraparound links where `wrap` says)
    links        LinkRole per link the machine has, in the order the step notes name them:
                 its role ("link", "intra", "inter": the topology's field) and the words key
                 ("switch", "inside", "between", "torus", "slice")
    device       what a device is called: "gpu" or "chip"
    terms        the formula panel's legend key: "one-level" (α, β and B, the base latency) or
                 "two-level" (α_f, β_f inside a node; α_i, β_i between nodes)
    nccl         whether NCCL's tuning model times it (a GPU machine's `tuning`)
    base, launch the per-collective base latency (s) and the launch mode (topology._Machine)
    notes        the step line's notes, words keys: a link's ("between", "inside", "torus", "slice")
                 or "nics" (a step with messages inside and between nodes)
    spec_fields  the fields a scenario file's machine spec of this kind takes (() : none)
A new kind is a topology class whose `record` returns one of these: the views draw it by its
layout family and name its links by their words keys, with no edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .links import LinkSpec

LAYOUTS = ("switch", "nodes", "torus")
LINK_WORDS = ("switch", "inside", "between", "torus", "slice")
NOTES = LINK_WORDS[1:] + ("nics",)
TERMS = ("one-level", "two-level")
NODES_SPEC = ("kind", "nodes", "per_node", "intra", "inter", "base")  # topology_presets.preset_from_spec
TORUS_SPEC = ("kind", "shape", "link", "base")


@dataclass(frozen=True)
class LinkRole:
    """One link of a machine: role, the topology field it is ("link", "intra", "inter"); words,
    the key the app names it by (LINK_WORDS); link, its LinkSpec."""

    role: str
    words: str
    link: LinkSpec

    def __post_init__(self):
        if self.words not in LINK_WORDS:
            raise ValueError(f"a link's words key is one of {', '.join(LINK_WORDS)}, got {self.words!r}")


@dataclass(frozen=True)
class KindRecord:
    """What a topology kind is (see the module docstring)."""

    kind: str
    layout: str
    n: int
    links: tuple
    nodes: int = 1
    per_node: int = 0
    grid: tuple = ()
    wrap: tuple = ()
    device: str = "gpu"
    terms: str = "one-level"
    nccl: bool = False
    base: float = 0.0
    launch: str = ""
    notes: tuple = ()
    spec_fields: tuple = ()

    def __post_init__(self):
        if set(self.notes) - set(NOTES):
            raise ValueError(f"a kind's step notes are among {', '.join(NOTES)}, got {self.notes!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"a kind's layout is one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        if self.terms not in TERMS:
            raise ValueError(f"a kind's terms are one of {', '.join(TERMS)}, got {self.terms!r}")
        if self.layout == "nodes" and (self.nodes < 2 or self.per_node * self.nodes != self.n):
            raise ValueError(f"a nodes layout needs 2 or more nodes of per_node devices, n = nodes × per_node; "
                             f"got {self.nodes} × {self.per_node} for n = {self.n}")
        if self.layout == "torus" and (not self.grid or len(self.wrap) != len(self.grid)):
            raise ValueError(f"a torus layout needs its grid and one wrap flag per axis, "
                             f"got {self.grid!r}, {self.wrap!r}")

    def link(self, role) -> LinkSpec | None:
        """The LinkSpec of the link with that role ("link", "intra", "inter"), or None."""
        return next((r.link for r in self.links if r.role == role), None)

    def words_link(self, words) -> LinkSpec | None:
        """The LinkSpec of the link the app names by `words` ("inside", "between", …), or None."""
        return next((r.link for r in self.links if r.words == words), None)

    def _main(self) -> LinkRole:
        return next((r for r in self.links if r.words == "inside"), self.links[0])

    @property
    def main(self) -> LinkSpec:
        """The machine's main link: inside a node where there are nodes, else its one link."""
        return self._main().link

    @property
    def main_role(self) -> str:
        """The topology field of the main link ("intra" or "link"): what a timed copy replaces."""
        return self._main().role

    @property
    def widest(self) -> LinkSpec:
        """The link NCCL's model and the NIC figures use between domains: "inter" where the kind has one."""
        return self.link("inter") or self.main

    @property
    def crosses(self) -> bool:
        """Do some messages leave a node (a link named "between")?"""
        return self.words_link("between") is not None


def switch_record(n, link, base=0.0, nccl=False, launch="", kind="switch", device="gpu") -> KindRecord:
    """The record of n devices round one switch over `link`."""
    return KindRecord(kind, "switch", int(n), (LinkRole("link", "switch", link),), device=device, nccl=bool(nccl),
                      base=float(base), launch=launch)


def record_of(topo) -> KindRecord | None:
    """topo's KindRecord; a topology of the reader's own without one (only n, link, n_ports and route,
    what Comm asks) is devices round one switch over its link; None for no topology."""
    if topo is None:
        return None
    rec = getattr(topo, "record", None)  # the one question asked of a topology's class
    if rec is not None:
        return rec
    return switch_record(topo.n, topo.link, getattr(topo, "base", 0.0), kind=type(topo).__name__.lower())
