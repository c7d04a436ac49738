"""
The mesh's axis plans are Plans (simcore.plan.Plan), a group's collective on a GPU machine is NCCL's
choice for that group's devices, and the torus collectives that were refused before: all-to-all over
several axes and the all-gather along a line (an axis without wraparound). Values against numpy;
times against closed forms written here, independently of the code under test, and against the
scaling book's forms ("How to Scale Your Model", sharding chapter).
"""

import dataclasses
import math

import numpy as np
import pytest

from simcore.links import IB_NDR400, NVLINK4, TPU_V4_ICI
from simcore.mesh import AxisPlan, Mesh, MeshError
from simcore.mesh.device_mesh import plan_cache_info
from simcore.plan import Plan
from simcore.topology import nodes, switch, torus
from simcore.topology_presets import TorusSlice, get_preset

RNG = np.random.default_rng(34)
DGX = get_preset("dgx-h100").topology(16)


def _node_group():
    """One DGX H100 node's 8 GPUs as a machine of their own (what a group of the inner axis spans)."""
    return switch(8, DGX.intra, base=DGX.base, tuning=DGX.tuning)


# -- 1. the axis plans are Plans -----------------------------------------------------------------
@pytest.mark.parametrize("machine,shape,op,axis", [
    (None, (2, 4), "all-reduce", "Y"), ("dgx-h100", (2, 8), "all-reduce", "Y"), ("dgx-h100", (2, 8), "all-gather", "X"),
    ("tpu-v4-4x4x4", (4, 4, 4), "all-gather", ("X", "Y")), ("tpu-v4-4x4x4", (4, 4, 4), "all-to-all", ("X", "Y")),
    ("tpu-v5e-16x16", (4, 4), "all-gather", "X"), (None, (2, 4), "ppermute", "X")])
def test_an_axis_plan_is_a_plan_resolved_once_and_read_by_the_log(machine, shape, op, axis):
    names = ("X", "Y", "Z")[:len(shape)]
    mesh = Mesh(shape, names, machine)
    S = 4096.0 * mesh.size(axis)
    p = mesh.plan(op, axis, S)
    assert isinstance(p, Plan) and isinstance(p, AxisPlan)
    assert p.op == op and p.nbytes == S and p.topology is mesh.topology and p.timed is not None
    assert p.time == pytest.approx(sum(t.seconds for t in p.terms), rel=1e-12) and p.form == p.time > 0
    assert p.why.text == p.why_text and p.why_text and p.form_text
    # resolved once: asking again is a cache hit, the same object, for another Mesh of the same layout too
    before = plan_cache_info()
    again = Mesh(shape, names, machine).plan(op, axis, S)
    assert again is p and plan_cache_info()["hits"] == before["hits"] + 1
    assert plan_cache_info()["misses"] == before["misses"]
    # what ran carries the same plan object
    if op != "ppermute":
        mesh.collective(op, axis, nbytes=S) if op != "all-to-all" else mesh.collective(
            op, axis, [np.zeros(int(S) // 8) for _ in range(mesh.n)])
        rec = mesh.log[-1]
        assert rec.plan is mesh.plan(op, axis, rec.nbytes)
        assert (rec.algo, rec.why, rec.form, rec.form_text) == (rec.plan.algo, rec.plan.why_text, rec.plan.time,
                                                               rec.plan.form_text)


def test_the_terms_are_the_alpha_beta_form_of_one_group_on_a_switch():
    mesh = Mesh((2, 4), ("X", "Y"))  # the lecture's NVLink 4 switch, no NCCL
    S = 1 << 20
    p = mesh.plan("all-reduce", "Y", S)
    terms = {t.name: t.seconds for t in p.terms}
    assert p.algo == "ring" and p.protocol == "" and p.why.kind == "lecture"
    assert terms["α"] == pytest.approx(2 * 3 * NVLINK4.alpha) and terms["S/β"] == pytest.approx(2 * 3 * S / 4 / NVLINK4.bw)


# -- 2. a group's plan is NCCL's choice for the group's devices -----------------------------------
@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
@pytest.mark.parametrize("S", [64e3, float(1 << 20), float(16 << 20), float(256 << 20)])
def test_the_node_axis_runs_what_nccl_picks_for_one_nodes_group(op, S):
    """2 × 8 DGX H100, the inner axis Y (8 GPUs of one node): the mesh runs topology.plan(op, S,
    group=one node) — NVLS or the ring with NCCL's protocol — and one group alone takes its time."""
    ref = DGX.plan(op, S, group=_node_group())
    alone = Mesh((2, 8), ("X", "Y"), "dgx-h100")
    alone.collective(op, "Y", nbytes=S, only_groups=[0])
    rec = alone.log[-1]
    assert (rec.algo, rec.protocol) == (ref.algo, ref.protocol)
    assert rec.plan.group_plan is ref
    assert rec.time == pytest.approx(ref.time, rel=1e-9)
    assert rec.plan.time == pytest.approx(ref.time, rel=1e-9)
    # both nodes at once: every GPU has its own NVLink port, so nothing is shared and nothing waits
    both = Mesh((2, 8), ("X", "Y"), "dgx-h100")
    both.collective(op, "Y", nbytes=S)
    assert both.log[-1].n_messages == 2 * rec.n_messages
    assert both.log[-1].time == pytest.approx(rec.time, rel=1e-12)


def test_nvls_over_each_node_sums_like_numpy_and_goes_through_each_nodes_switch():
    from simcore.trace import SWITCH
    mesh = Mesh((2, 8), ("X", "Y"), "dgx-h100", byte_scale=4096)  # 8 KiB arrays timed as 32 MiB
    arrays = [RNG.standard_normal(1024) for _ in range(16)]
    out = mesh.collective("all-reduce", "Y", arrays)
    rec = mesh.log[-1]
    assert rec.algo == "innet" and rec.protocol == "Simple" and "NVLS" in rec.why
    for row in mesh.positions("Y"):
        for p in row:
            np.testing.assert_allclose(out[p], sum(arrays[q] for q in row), atol=1e-12)
    # NCCL's NVLS: 2·(latency / 2) + (g+1)·S/(g·β) with its bandwidth; equal to the group's own plan
    ref = DGX.plan("all-reduce", rec.nbytes, group=_node_group())
    assert ref.algo == "innet" and rec.time == pytest.approx(ref.time, rel=1e-9)
    rows = mesh.comm.trace.rows(0)
    up = rows["dst"] == SWITCH
    assert up.sum() == (rows["src"] == SWITCH).sum() == 16 * 8  # 8 chunks up and down for every GPU
    # the up-messages hold only NVLink ports (each node's NVSwitch), never a NIC
    assert set(rows["src"][up].tolist()) == set(range(16))


def test_the_outer_axis_is_ncclss_ring_through_the_nodes_and_its_groups_hold_their_own_nics():
    """X: 8 groups of 2, one GPU on each node. A DGX H100 has one ConnectX-7 a GPU (DGX H100 datasheet:
    8 × 400 Gb/s OSFP ports), so the 8 groups' rings hold 8 different NIC pairs: together they take as
    long as one alone, which is NCCL's ring for one GPU a node, 2(g−1)(α + S/(gβ)) + base on its links."""
    S = float(1 << 20)
    ref = DGX.plan("all-reduce", S, group=nodes(2, 1, DGX.intra, DGX.inter, base=DGX.base, tuning=DGX.tuning))
    together, alone = Mesh((2, 8), ("X", "Y"), "dgx-h100"), Mesh((2, 8), ("X", "Y"), "dgx-h100")
    together.collective("all-reduce", "X", nbytes=S)
    alone.collective("all-reduce", "X", nbytes=S, only_groups=[3])
    t, a = together.log[-1], alone.log[-1]
    assert ref.algo == "ring-nodes" and t.algo == "ring" and t.protocol == ref.protocol
    assert a.time == pytest.approx(ref.time, rel=1e-9)
    link, base, g = t.plan.timed.inter, t.plan.timed.base, 2
    assert link.bw <= IB_NDR400.bw
    assert t.time == pytest.approx(base + 2 * (g - 1) * (link.alpha + S / (g * link.bw)), rel=1e-9)
    assert t.time == pytest.approx(a.time, rel=1e-12)


def test_a_choice_the_engine_cannot_run_on_a_group_is_said_in_one_sentence_and_the_ring_runs():
    """8 nodes: at 1 KB NCCL picks its Tree for one GPU a node; the engine runs trees only over a whole
    machine, so the group runs NCCL's ring, and the plan's why says so."""
    machine = nodes(8, 8, NVLINK4, IB_NDR400, base=DGX.base, tuning="hopper")
    mesh = Mesh((8, 8), ("X", "Y"), machine)
    p = mesh.plan("all-reduce", "X", 1e3)
    assert p.group_plan.algo == "tree" and p.algo == "ring" and p.protocol
    assert "tree" in p.why_text and "ring" in p.why_text and p.why_text.count(". ") == 0
    mesh.collective("all-reduce", "X", nbytes=1e3)
    assert mesh.log[-1].time == pytest.approx(p.time, rel=1e-9)
    with pytest.raises(MeshError, match="cannot run 'innet'"):  # NVLS is for groups inside one node
        mesh.plan("all-reduce", "X", 1e3, algo="innet")


# -- 3. all-to-all over several torus axes --------------------------------------------------------
def _a2a_reference(arrays, rows, g, split, concat):
    out = {}
    for row in rows:
        for i, p in enumerate(row):
            out[p] = np.concatenate([np.split(arrays[q], g, axis=split)[i] for q in row], axis=concat)
    return out


def _bidi_a2a_form(a, S, alpha, beta):
    """The bidirectional ring all-to-all of S bytes a device over a devices, written out: a/2 steps;
    one way a link carries the blocks (S/a each) of distances 1 … a/2 − 1 and half the opposite one:
    Σ_{d<a/2} d + (a/2)/2 = a²/8 blocks (even a)."""
    assert a % 2 == 0
    return (a // 2) * alpha + (a * a / 8) * (S / a) / beta


@pytest.mark.parametrize("axis", [("X", "Y"), ("Y", "Z"), ("X", "Y", "Z"), ("Z", "X")])
def test_all_to_all_over_several_torus_axes_equals_numpy_and_its_form(axis):
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4")
    g = mesh.size(axis)
    arrays = [RNG.standard_normal((g * 2, 3)) for _ in range(mesh.n)]
    out = mesh.collective("all-to-all", axis, arrays, split_dim=0, concat_dim=1)
    ref = _a2a_reference(arrays, mesh.positions(axis), g, 0, 1)
    for p, want in ref.items():
        np.testing.assert_array_equal(out[p], want)
    rec = mesh.log[-1]
    S, link = float(arrays[0].nbytes), TPU_V4_ICI
    # axis by axis: every phase is a whole buffer's bidirectional all-to-all along one axis of 4
    form = sum(_bidi_a2a_form(4, S, link.alpha, link.bw) for _ in axis)
    assert rec.algo == "multi-axis" and rec.time == pytest.approx(form, rel=1e-9)
    assert rec.form == pytest.approx(form, rel=1e-9)


def test_all_to_all_over_two_torus_axes_against_the_books_cost():
    """The book: an AllToAll on a bidirectional ring costs a quarter of an AllGather of the same array,
    bytes/(4·W) with W the bidirectional bandwidth (sharding chapter, "AllGather / 4 for a bidirectional
    ring"; its footnote: N²/4 blocks of bytes/N² a device) — N·S/(4W) with S one device's buffer. Axis
    by axis, X then Y each move the whole buffer: Σ_axes N_a·S/(4W). Bandwidth-bound the simulated time
    is within the α terms of it."""
    scale = 256.0  # 512 KiB a device timed as 128 MiB: bandwidth-bound
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4", byte_scale=scale)
    arrays = [RNG.standard_normal((16 * 64, 64)) for _ in range(mesh.n)]
    out = mesh.collective("all-to-all", ("X", "Y"), arrays, split_dim=0, concat_dim=0)
    ref = _a2a_reference(arrays, mesh.positions(("X", "Y")), 16, 0, 0)
    assert all(np.array_equal(out[p], v) for p, v in ref.items())
    rec = mesh.log[-1]
    S, W = float(arrays[0].nbytes) * scale, 2 * TPU_V4_ICI.bw
    book = 4 * S / (4 * W) + 4 * S / (4 * W)
    assert rec.time == pytest.approx(book + 4 * TPU_V4_ICI.alpha, rel=1e-9)  # 2 steps an axis of 4
    assert 1.0 < rec.time / book < 1.01
    # one axis: the book's N·S/(4W) against the one-way ring's (N−1)·S/(2β), about 4× (the book's Question 10)
    one = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4", byte_scale=scale)
    one.collective("all-to-all", "X", arrays, split_dim=0, concat_dim=0, algo="ring")
    ring = one.log[-1]
    assert ring.time == pytest.approx(3 * TPU_V4_ICI.alpha + 3 * S / (2 * TPU_V4_ICI.bw), rel=1e-9)
    bidi = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4", byte_scale=scale)
    bidi.collective("all-to-all", "X", arrays, split_dim=0, concat_dim=0)
    assert bidi.log[-1].algo == "bidi"
    assert bidi.log[-1].time == pytest.approx(_bidi_a2a_form(4, S, TPU_V4_ICI.alpha, TPU_V4_ICI.bw), rel=1e-9)
    assert bidi.log[-1].time == pytest.approx(4 * S / (4 * W), rel=1e-2)  # the book's N·S/(4W)
    assert 2.95 < ring.time / bidi.log[-1].time < 3.01  # 4·(N−1)/N: the book's factor 4 as N grows


def test_an_odd_torus_axis_all_to_all_goes_the_shorter_way_round():
    mesh = Mesh((5, 3), ("X", "Y"), torus((5, 3), TPU_V4_ICI))
    arrays = [RNG.standard_normal((15, 2)) for _ in range(15)]
    out = mesh.collective("all-to-all", ("X", "Y"), arrays, split_dim=0, concat_dim=1)
    for p, want in _a2a_reference(arrays, mesh.positions(("X", "Y")), 15, 0, 1).items():
        np.testing.assert_array_equal(out[p], want)
    S, a, b = float(arrays[0].nbytes), TPU_V4_ICI.alpha, TPU_V4_ICI.bw
    # odd a: (a−1)/2 steps, one way a link carries 1 + 2 + … + (a−1)/2 = (a²−1)/8 blocks of S/a
    form = sum(((n - 1) // 2) * a + (n * n - 1) / 8 * (S / n) / b for n in (5, 3))
    assert mesh.log[-1].time == pytest.approx(form, rel=1e-9)


# -- 3. the line: an axis without wraparound -----------------------------------------------------
@pytest.mark.parametrize("machine", ["tpu-v5e-16x16", TorusSlice((4, 8), TPU_V4_ICI, wrap=(False, True))])
def test_an_axis_without_wraparound_gathers_along_a_line(machine):
    """The book's TPU v5e example: a 4-axis of a 4×4 v5e slice has no wraparound, "we have to do 3 hops
    for data from the edges to reach the other edge", T = 3·(V/4)/W with W one direction's bandwidth:
    (N−1)·V/(N·W), plus a hop's α each."""
    shape = (4, 4) if isinstance(machine, str) else (4, 8)
    mesh = Mesh(shape, ("X", "Y"), machine)
    arrays = [RNG.standard_normal((64, 32)) for _ in range(mesh.n)]
    out = mesh.collective("all-gather", "X", arrays, dim=0)
    rec = mesh.log[-1]
    for row in mesh.positions("X"):
        want = np.concatenate([arrays[p] for p in row], axis=0)
        assert all(np.array_equal(out[p], want) for p in row)
    V, N, link = rec.nbytes, 4, mesh.topology.link
    book = (N - 1) * V / (N * link.bw)
    assert rec.algo == "line" and "wraparound" in rec.why
    assert rec.time == pytest.approx(book + (N - 1) * link.alpha, rel=1e-9)
    # every message goes between neighbours of the line: never across the missing wraparound link
    rows = mesh.comm.trace.rows(0)
    coords = [np.unravel_index(rows[k], shape)[0] for k in ("src", "dst")]
    assert np.all(np.abs(coords[0] - coords[1]) == 1)
    # the bidirectional ring it replaces would need the wraparound: where there is one, Y runs it
    if not isinstance(machine, str):
        mesh.collective("all-gather", "Y", arrays, dim=0)
        assert mesh.log[-1].algo == "bidi"


@pytest.mark.parametrize("op", ["reduce-scatter", "all-reduce"])
def test_reduce_scatter_and_all_reduce_along_a_line_equal_numpy_and_the_line_form(op):
    mesh = Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16")
    arrays = [RNG.standard_normal((16, 8)) for _ in range(16)]
    out = mesh.collective(op, "Y", arrays, dim=0)
    for row in mesh.positions("Y"):
        total = sum(arrays[p] for p in row)
        for j, p in enumerate(row):
            want = np.split(total, 4)[j] if op == "reduce-scatter" else total
            np.testing.assert_allclose(out[p], want, atol=1e-12)
    rec = mesh.log[-1]
    S, g, link = rec.nbytes, 4, mesh.topology.link
    one = (g - 1) * (link.alpha + S / (g * link.bw))
    assert rec.algo == "line" and rec.time == pytest.approx(one * (2 if op == "all-reduce" else 1), rel=1e-9)


def test_timing_only_runs_a_line_as_the_arrays_do():
    a, b = Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16"), Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16")
    arrays = [RNG.standard_normal(256) for _ in range(16)]
    a.collective("all-reduce", "X", arrays)
    b.collective("all-reduce", "X", nbytes=arrays[0].nbytes)
    assert a.log[-1].time == pytest.approx(b.log[-1].time, rel=1e-12)
    assert a.log[-1].n_messages == b.log[-1].n_messages == 4 * 2 * 2 * (3 + 2 + 1)  # 4 lines, 2 phases, 2 ways, a chunk fewer each step


# -- 4. bad input stays one sentence -------------------------------------------------------------
@pytest.mark.parametrize("build,words", [
    (lambda: Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16").plan("all-to-all", ("X", "Y"), 64.0), "no wraparound"),
    (lambda: Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16").plan("all-gather", "X", 64.0, algo="bidi"), "cannot run 'bidi'"),
    (lambda: Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4").plan("all-to-all", ("X", "W"), 64.0), "no axis 'W'"),
    (lambda: Mesh((2, 8), ("X", "Y"), "dgx-h100").plan("all-gather", "Y", 64.0, algo="innet"), "cannot run 'innet'"),
    (lambda: Mesh((2, 4), ("X", "Y")).plan("broadcast", "X", 64.0), "unknown collective"),
])
def test_bad_axis_input_is_one_sentence(build, words):
    with pytest.raises(MeshError) as e:
        build()
    msg = str(e.value)
    assert words in msg and "\n" not in msg and msg.count(". ") == 0


def test_the_engine_stays_qt_free():
    import subprocess
    import sys
    code = ("import sys; import simcore.mesh, simcore.mesh.device_mesh, simcore.mesh.rings; "
            "print(any(m.startswith(('PySide6', 'PyQt')) for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_the_plan_record_is_what_a_trace_keeps():
    mesh = Mesh((2, 8), ("X", "Y"), "dgx-h100")
    p = mesh.plan("all-reduce", "Y", float(1 << 20))
    rec = p.record_fields()
    assert (rec.op, rec.algo, rec.protocol, rec.time) == ("all-reduce", p.algo, p.protocol, p.time)
    assert dataclasses.replace(p, algo="x").algo == "x" and math.isfinite(p.time)


def test_the_traces_collective_record_carries_the_axis_plan():
    mesh = Mesh((2, 8), ("X", "Y"), "dgx-h100", byte_scale=4096)
    mesh.collective("all-reduce", "Y", [RNG.standard_normal(1024) for _ in range(16)])
    rec, c = mesh.log[-1], mesh.comm.trace.collectives[-1]
    assert c.plan is not None and c.algo == "innet over Y" == c.plan.algo
    assert (c.plan.protocol, c.plan.time, c.plan.terms) == (rec.plan.protocol, rec.plan.time, rec.plan.terms)
    assert c.plan.why.text == rec.why


# -- 5. the mesh does not choose: the plan of the topology one group spans does --------------------------
@pytest.fixture
def fresh_axis_plans():
    """Mesh.plan's cache emptied before and after (a patched machine's choice must not outlive the test)."""
    from simcore.mesh.device_mesh import plan_cache_clear
    plan_cache_clear()
    yield
    plan_cache_clear()


@pytest.mark.parametrize("mesh,axis,other,sub", [
    (lambda: Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4"), "X", "Z",
     lambda: TorusSlice((4,), TPU_V4_ICI, get_preset("tpu-v4-4x4x4").topology(64).base, wrap=(True,))),
    (lambda: Mesh((2, 4), ("X", "Y")), "Y", None, lambda: switch(4, NVLINK4)),
    (lambda: Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16"), "Y", "X",
     lambda: TorusSlice((4,), get_preset("tpu-v5e-16x16").topology(16).link,
                        get_preset("tpu-v5e-16x16").topology(16).base, wrap=(False,))),
], ids=["tpu-v4 ring", "switch", "tpu-v5e line"])
def test_a_new_axis_plan_asks_the_machines_plan_for_one_group_once(fresh_axis_plans, mesh, axis, other, sub):
    from simcore import plan as machine_plans
    m, S = mesh(), 3.0 * (1 << 20) + 8  # a size no other test asks
    before = machine_plans.cache_info()
    p = m.plan("all-gather", axis, S)
    after = machine_plans.cache_info()
    assert after.misses == before.misses + 1  # the group's topology planned once: its own decision
    # it was exactly the group's topology: asking it again is simcore.plan's cache hit, the same Plan
    own = sub().plan("all-gather", S)
    assert machine_plans.cache_info().misses == after.misses and own.choice
    assert own.algo == ("torus" if "torus" in sub().kinds else "ring")
    m.plan("all-gather", axis, S)  # the axis plan again: Mesh.plan's own cache, simcore.plan not asked
    assert machine_plans.cache_info().hits == after.hits + 1 and p.algo in ("bidi", "ring", "line")
    if other is not None:  # another axis whose groups span the same topology: the machine's plan is a hit
        h = machine_plans.cache_info()
        q = m.plan("all-gather", other, S)
        assert machine_plans.cache_info().misses == h.misses and machine_plans.cache_info().hits == h.hits + 1
        assert q.algo == p.algo and q.axis == (other,)


def _choosing(cls, monkeypatch, pick):
    """cls's plan with the machine's choice (algo None) replaced by pick(op, plan) (an algorithm name)."""
    real = cls.plan

    def plan(self, op, nbytes, algo=None, group=None):
        p = real(self, op, nbytes, algo, group)
        if algo is None and group is None:
            to = pick(op, p)
            if to != p.algo:
                try:
                    return real(self, op, nbytes, to, group)
                except ValueError:  # not registered here: the plan as if the machine had chosen it
                    return dataclasses.replace(p, algo=to)
        return p

    monkeypatch.setattr(cls, "plan", plan)


def test_a_torus_groups_own_choice_is_what_the_mesh_runs(fresh_axis_plans, monkeypatch):
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4")
    S = float(1 << 16)
    assert mesh.plan("all-gather", "Y", S).algo == "bidi"  # XLA's rings: the book's bidirectional ring
    from simcore.mesh.device_mesh import plan_cache_clear
    plan_cache_clear()
    _choosing(TorusSlice, monkeypatch, lambda op, p: "ring" if op == "all-gather" else p.algo)
    p = mesh.plan("all-gather", "Y", S)
    assert p.algo == "ring" and p.choice and p.why.mesh == "ring"  # the slice chose its plain ring
    g = 4
    alpha, beta = TPU_V4_ICI.alpha, TPU_V4_ICI.bw
    assert p.time == pytest.approx((g - 1) * (alpha + S / g / beta), rel=1e-12)  # the one-way ring's form
    blocks = [RNG.standard_normal(3) for _ in range(64)]
    out = mesh.collective("all-gather", "Y", blocks)
    for row in mesh.positions("Y"):
        want = np.concatenate([blocks[q] for q in row])
        for q in row:
            np.testing.assert_array_equal(out[q], want)
    assert mesh.log[-1].algo == "ring"


def test_a_gpu_groups_own_choice_is_what_the_mesh_runs(fresh_axis_plans, monkeypatch):
    from simcore.topology import Switch
    mesh = Mesh((2, 8), ("X", "Y"), "dgx-h100")
    S = float(1 << 24)
    assert mesh.plan("all-reduce", "Y", S).algo == "innet"  # NCCL picks NVLS for one node's 8 GPUs at 16 MiB
    from simcore.mesh.device_mesh import plan_cache_clear
    plan_cache_clear()
    _choosing(Switch, monkeypatch, lambda op, p: "ring" if op == "all-reduce" else p.algo)
    p = mesh.plan("all-reduce", "Y", S)
    assert p.algo == "ring" and p.why.mesh == "nccl-group" and p.group_plan.algo == "ring"
    assert p.time == pytest.approx(_node_group().plan("all-reduce", S, "ring").time, rel=1e-9)


def test_a_choice_the_mesh_has_no_runner_for_is_one_sentence(fresh_axis_plans, monkeypatch):
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4")
    _choosing(TorusSlice, monkeypatch, lambda op, p: "direct" if op == "all-gather" else p.algo)
    with pytest.raises(MeshError) as e:
        mesh.plan("all-gather", "Y", 4096.0)
    msg = str(e.value)
    assert "chooses direct for one group" in msg and "it runs bidi, ring" in msg and "\n" not in msg


def test_a_mesh_whose_shape_is_not_the_toruss_is_not_read_as_its_dimensions():
    """Mesh((2, 4, 8)) on the 4×4×4 torus took its X (2) for the torus's first dimension (4): the plan said
    "multi-axis" over (X, Y) and running it raised a raw ValueError. Its axes are not the torus's: one sentence."""
    import numpy as np
    from simcore.mesh.errors import MeshError

    mesh = Mesh((2, 4, 8), ("X", "Y", "Z"), "tpu-v4-4x4x4", devices=np.arange(64))
    with pytest.raises(MeshError, match="not its torus neighbour"):
        mesh.plan("all-gather", ("X", "Y"), 2.0 ** 20)


@pytest.mark.parametrize("y_axis", ["Y,Z", ("Y", "Z")])
def test_fsdp_tp_takes_a_tuple_of_axes_for_tp_as_the_book_writes_it(y_axis):
    """FSDP over X, TP over YZ on the 4×4×4 torus (the book's mixed layout): `--param y_axis=Y,Z` and
    y_axis=("Y", "Z") were refused ("no axis ('Y', 'Z')": the D split was checked over a nested tuple)."""
    from simcore.mesh.programs import run_program

    res = run_program("fsdp-tp-layer", {"X": 4, "Y": 4, "Z": 4}, "tpu-v4-4x4x4", y_axis=y_axis)
    axes = [tuple(r.axis) for r in res.mesh.log]
    assert axes == [("Y", "Z"), ("X",), ("X",), ("Y", "Z")]
    assert res.max_err < 1e-12


def test_the_books_W_on_a_line_is_one_direction():
    """The published form of a program on a slice without wraparound took W as both directions of a
    link, as on a ring, so 2-D weight-stationary on v5e 4×4 read 1.51× its form; on a line each chunk's
    far end goes one way (the book's v5e example), and the ratio is a ring of 4's (g − 1)/g again."""
    from simcore.mesh.programs import book_W, run_program

    res = run_program("2d-ws-ffn", {"X": 4, "Y": 4}, "tpu-v5e-16x16")
    link = res.mesh.topology.link.bw
    assert book_W(res.mesh, "X") == link and book_W(res.mesh, "Y") == link
    for row in res.rows:
        assert row.simulated / row.published == pytest.approx(3 / 4, rel=0.03)  # the book drops (g−1)/g
    v4 = run_program("2d-ws-ffn", {"X": 4, "Y": 4, "Z": 4}, "tpu-v4-4x4x4")
    assert book_W(v4.mesh, "X") == 2 * v4.mesh.topology.link.bw  # a wrapped axis: both directions
