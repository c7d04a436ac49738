"""
A mesh plan's reason and closed form in the app's language (issue 34): every reason Mesh.plan gives
is a kind and its numbers (Why.mesh, Why.numbers), its closed form the math and the keys of the words
around it (AxisPlan.form_math, form_notes), and the app words them (app/words.py mesh_reason,
mesh_form) in the explanation, the formula panel and the mesh view's header. Each case below is a real
mesh run that hits one reason; in Chinese none of the engine's English sentence shows (only names:
NCCL, NVLS, the links', ops' and algorithms'), and its numbers (g, the protocol, the hops) do; in
English the sentence says what the engine's does.
"""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np
import pytest

from simcore.mesh import Mesh
from simcore.mesh.programs import Result, _rows_of
from simcore.plan import PlanRecord, Why

# names that stay as they are in every language: NCCL's own words, ops, algorithms, protocols, links'
NAMES = {"NCCL", "NCCL's", "NVLS", "NVLink", "NVSwitch", "H100", "InfiniBand", "all-gather", "reduce-scatter",
         "all-reduce", "all-to-all", "ppermute", "ring", "bidi", "innet", "direct", "pairs", "line", "multi-axis",
         "gather", "tree", "hier", "ring-nodes", "Simple", "LL128", "nccl", "graph", "tuning"}  # gather: the op


def _arrays(mesh, g, rows=4):
    return [np.full((g * rows, 2), float(p)) for p in range(mesh.n)]


def _run(shape, machine, op, axis, algo=None, S=None):
    """A real mesh run of one collective: (its MeshInfo, its event, the plan it ran)."""
    from app.core.mesh_model import mesh_info

    mesh = Mesh(shape, ("X", "Y", "Z")[:len(shape)], machine)
    g = mesh.size(axis)
    if S is not None:
        mesh.collective(op, axis, nbytes=S, algo=algo)
    elif op == "ppermute":
        mesh.collective(op, axis, _arrays(mesh, g), perm=[(i, (i + 1) % g) for i in range(g)])
    else:
        mesh.collective(op, axis, _arrays(mesh, g), algo=algo)
    rec = mesh.log[-1]
    res = Result("why-words", mesh, _rows_of(mesh.log), 0.0, rec.form, "T")  # the program total: not tested here
    info = mesh_info(res)
    return info, info.events[0], rec.plan


def _texts(info, e):
    """The explanation and the formula panel as plain text, and the mesh view header's reason."""
    from app.words import mesh_formula_html, mesh_html, mesh_why

    def plain(h):
        return html.unescape(re.sub(r"<[^>]+>", " ", h))

    return plain(mesh_html(info, 0.5 * (e.t_start + e.t_end))), plain(mesh_formula_html(info, e.coll)), mesh_why(e)


def _english_words(text, keep=()):
    """The ASCII words of text longer than 3 letters that are not names (NAMES, keep)."""
    return {w for w in re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]", text) if len(w) > 3 and w not in NAMES
            and w not in keep and w.removesuffix("'s") not in NAMES}


def _link_names(plan):
    """The words of the links a reason names (their own names, kept in every language)."""
    words = set()
    for key in ("machine", "group"):
        m = plan.why.get(key) or ()
        for v in m:
            if isinstance(v, str):
                words |= set(re.findall(r"[A-Za-z0-9']+", v))
    return words


# (shape, machine, op, axis, algo, S) -> kind, what the Chinese must show, the English sentence
CASES = [
    ("switch-ring", ((2, 4), None, "all-gather", "Y", None, None), "ring", ["8 端口交换机"],
     "the lecture's ring over each group, every group at once on the ports of a switch of 8 ports (NVLink 4 (H100))"),
    ("ppermute", ((2, 4), None, "ppermute", "Y", None, None), "pairs", [],
     "ppermute sends each pair's array straight to its partner"),
    ("a2a-one-shot", ((2, 4), None, "all-to-all", "Y", None, None), "a2a-direct", [],
     "every block goes straight to its device (one-shot), as NCCL's grouped sends do"),
    ("a2a-torus", ((4, 4, 4), "tpu-v4-4x4x4", "all-to-all", "X", None, None), "a2a-bidi", ["4×4×4"],
     "on the 4×4×4 torus only neighbours talk: each block goes the shorter way round the axis's ring, the opposite "
     "one half each way (the book's bidirectional all-to-all)"),
    ("a2a-torus-axes", ((4, 4, 4), "tpu-v4-4x4x4", "all-to-all", ("X", "Y"), None, None), "a2a-axes",
     ["4×4×4", "Y 然后 X"],
     "on the 4×4×4 torus only neighbours talk: the blocks go axis by axis, Y then X, each axis a bidirectional "
     "all-to-all (the shorter way round)"),
    ("a2a-torus-pair", ((2, 4), "tpu-v5e-16x16", "all-to-all", "X", None, None), "a2a-ring", ["2×4"],
     "on the 2×4 torus only neighbours talk: each block travels round the axis's ring"),
    ("multi-axis-gather", ((4, 4, 4), "tpu-v4-4x4x4", "all-gather", ("X", "Y"), None, None), "multi-axis",
     ["2 条环面轴", "2 份"],
     "over 2 torus axes the book's gather uses every axis's links at once: the data in 2 parts, each going along "
     "the axes in its own turn, each both ways round"),
    ("multi-axis-all-reduce", ((4, 4, 4), "tpu-v4-4x4x4", "all-reduce", ("X", "Y"), None, None), "multi-axis",
     ["2 条环面轴"], None),
    ("bidi-ring", ((4, 4, 4), "tpu-v4-4x4x4", "all-gather", "X", None, None), "bidi", [],
     "the book's bidirectional ring: half of every chunk goes each way round the torus axis"),
    ("pair-ring", ((2, 4), "tpu-v5e-16x16", "all-gather", "X", None, None), "pair", [],
     "a ring of two: the pair exchanges its chunks"),
    ("line", ((4, 4), "tpu-v5e-16x16", "all-gather", "X", None, None), "line", ["4×4", "3 跳", "X 轴"],
     "axis X of the 4×4 torus has no wraparound link: a line, not a ring, so every chunk goes both ways along it "
     "and the ends' chunks travel 3 hops (the book's no-wraparound gather)"),
    ("nccl-Y", ((2, 8), "dgx-h100", "all-reduce", "Y", None, None), "nccl-group", ["8 个设备", "协议 LL"],
     "NCCL's choice for one group of 8 on a switch of 8 ports (NVLink 4 (H100)): NCCL's ring with LL, every group at "
     "once, timed as NCCL's model times it at this size"),
    ("nccl-X", ((2, 8), "dgx-h100", "all-reduce", "X", None, None), "nccl-group", ["2 个设备", "协议 LL", "2 个节点"],
     "NCCL's choice for one group of 2 on 2 nodes of one GPU each (InfiniBand NDR 400 between them): NCCL's ring "
     "with LL, every group at once, timed as NCCL's model times it at this size"),
    ("nvls", ((8,), "dgx-h100", "all-reduce", "X", None, 4 * 2.0 ** 20), "nccl-group", ["8 个设备", "协议 Simple",
                                                                                     "NVLS"],
     "NCCL's choice for one group of 8 on a switch of 8 ports (NVLink 4 (H100)): NVLS (each group reduced in its "
     "NVSwitch) with Simple, every group at once, timed as NCCL's model times it at this size"),
    ("ring-across-nodes", ((2, 8), "dgx-h100", "all-reduce", ("X", "Y"), None, None), "ring", ["2 个节点", "每节点 8"],
     "the lecture's ring over each group, every group at once on the ports of 2 nodes of 8 GPUs (NVLink 4 (H100) "
     "inside a node, InfiniBand NDR 400 between nodes)"),
    ("nccl-cannot", ((8, 8), "dgx-h100", "all-reduce", "X", None, 256.0), "nccl-cannot", ["8 个设备", "tree",
                                                                                        "协议 LL"],
     "NCCL's choice for one group of 8 on 8 nodes of one GPU each (InfiniBand NDR 400 between them) is tree with LL, "
     "which the engine runs only over a whole machine's devices, so every group runs NCCL's ring, with LL"),
    ("asked", ((2, 4), None, "all-gather", "Y", "bidi", None), "asked", ["bidi"], "bidi, as asked"),
    ("one-device", ((1, 8), None, "all-gather", "X", None, None), "ring", ["只有一个设备"], None),
]


@pytest.fixture(scope="module")
def runs():
    return {name: _run(*args) for name, args, *_ in CASES}


@pytest.mark.parametrize("name,args,kind,zh_shows,en", CASES, ids=[c[0] for c in CASES])
def test_every_mesh_reason_is_worded_from_its_kind_in_chinese_and_english(qapp, runs, name, args, kind, zh_shows, en):
    from app import i18n
    from app.words import mesh_form, mesh_reason

    info, e, plan = runs[name]
    assert plan.why.mesh == kind and plan.why_text == e.why  # the engine's English is still the record's
    # Chinese: the explanation, the formula panel and the mesh view's reason show none of the English
    i18n.set_language(qapp, "zh")
    explain, formula, header = _texts(info, e)
    keep = _link_names(plan) | set(re.findall(r"[A-Za-z]+", plan.form_math))  # names, and the math's own
    left = _english_words(plan.why_text, keep)
    for w in sorted(left):
        for where, text in (("explanation", explain), ("formula", formula), ("header", header)):
            assert not re.search(rf"(?<![A-Za-z_-]){re.escape(w)}(?![A-Za-z-])", text), (name, where, w, text)
    reason = mesh_reason(plan)
    assert reason in explain and reason == header and reason != plan.why_text
    for s in zh_shows:
        assert s in reason or s in mesh_form(plan), (name, s, reason)
    if plan.protocol:
        assert f"协议 {plan.protocol}" in reason and plan.protocol in formula
    # the closed form: the math as the engine wrote it, the words around it in Chinese
    form = mesh_form(plan)
    assert plan.form_math in form
    assert form in formula if plan.time > 0 else form == "只有一个设备：没有数据移动"  # g = 1: nothing moves
    notes_words = _english_words(plan.form_text.replace(plan.form_math, ""), keep)
    assert notes_words or not plan.form_notes  # the notes' words are English in the engine's text ...
    for w in sorted(notes_words):  # ... and none of them is left in Chinese
        assert not re.search(rf"(?<![A-Za-z_-]){re.escape(w)}(?![A-Za-z-])", form), (name, w, form)
    # English: the sentence says what the engine's does; the form is the engine's own, word for word
    i18n.set_language(qapp, "en")
    explain_en, formula_en, header_en = _texts(info, e)
    if en is not None:
        assert mesh_reason(plan) == en
    assert mesh_reason(plan) in explain_en and header_en == mesh_reason(plan)
    assert mesh_form(plan) == plan.form_text and (plan.form_text in formula_en or plan.time == 0)


def test_the_numbers_of_the_reasons_are_the_runs_own(runs):
    """g, the protocol and the machines as the plan ran them, not the sentence's."""
    _, _, p = runs["nccl-Y"]
    assert dict(p.why.numbers) == {"g": 8, "group": ("switch", 8, "NVLink 4 (H100)"), "algo": "ring",
                                   "protocol": p.protocol}
    assert p.protocol == "LL" and p.group_size == 8 and p.n_groups == 2
    _, _, p = runs["line"]
    assert dict(p.why.numbers) == {"axis": "X", "machine": ("torus", (4, 4)), "hops": 3}
    _, _, p = runs["a2a-torus-axes"]
    assert p.why.get("axes") == ("Y", "X")
    _, _, p = runs["multi-axis-all-reduce"]
    assert p.form_notes == ("rs-ag-each", "multi-axis-m")
    _, _, p = runs["ring-across-nodes"]
    assert p.form_notes == ("slowest-hop",) and p.why.get("machine") == ("nodes", 2, 8, "NVLink 4 (H100)",
                                                                         "InfiniBand NDR 400")
    _, _, p = runs["nvls"]
    assert p.algo == "innet" and p.form_notes == ("nvls", "nccl-timed") and p.why.get("algo") == "innet"
    _, _, p = runs["nccl-cannot"]
    assert p.why.get("own_algo") == "tree" and p.why.get("protocol") == p.protocol == "LL"


def test_a_mesh_reason_survives_a_trace_file(runs):
    """The kind and numbers go through a trace's JSON (PlanRecord) and come back equal and hashable."""
    import json

    for name in ("nccl-X", "a2a-torus-axes", "line"):
        _, _, p = runs[name]
        rec = p.record_fields()
        back = PlanRecord.from_json(json.loads(json.dumps(rec.to_json())))
        assert back.why == p.why and hash(back.why) == hash(p.why)
    assert Why("lecture").mesh == "" and Why("lecture").numbers == ()  # a machine's own plan: no mesh kind


def test_nccl_own_pick_differs_and_unknown_kinds(qapp, runs):
    """The reason where a group runs NCCL's ring while NCCL's own pick for such a group is another (no preset
    reaches it today: the kind is worded all the same), and a kind this app does not know: the engine's sentence."""
    from app import i18n
    from app.words import mesh_reason

    _, _, p = runs["nccl-Y"]
    differs = dataclasses.replace(p, why=dataclasses.replace(
        p.why, mesh="nccl-own-differs", numbers=(("g", 8), ("algo", "ring"), ("protocol", "LL"),
                                                 ("own_algo", "ring-nodes"), ("own_nccl", "Ring"),
                                                 ("own_protocol", "LL128"))))
    i18n.set_language(qapp, "en")
    assert mesh_reason(differs) == ("NCCL's ring with LL over each group of 8, every group at once; NCCL's own pick "
                                    "for such a group: ring-nodes LL128")
    i18n.set_language(qapp, "zh")
    zh = mesh_reason(differs)
    assert "8 个设备" in zh and "协议 LL" in zh and "ring-nodes LL128" in zh and not _english_words(zh)
    unknown = dataclasses.replace(p, why=dataclasses.replace(p.why, mesh="from-the-future"))
    assert mesh_reason(unknown) == p.why_text


@pytest.mark.parametrize("program,mesh,machine", [("redistribute", "X=2,Y=4", ""),
                                                  ("dp-tp-forward", "X=2,Y=8", "dgx-h100")])
def test_the_programs_published_form_is_in_the_users_language(qapp, program, mesh, machine):
    """The explanation's last line ("the book's …") said the program's English ("each collective's closed form",
    "ring: … per AR") in the Chinese UI."""
    from app.core.scenarios import Scenario, build_run
    from app import i18n
    from app.words import mesh_html

    info = build_run(Scenario().with_changes(kind="mesh", mesh=mesh, program=program, topology=machine)).mesh
    try:
        i18n.set_language(qapp, "zh")
        text = mesh_html(info, 0.0)
    finally:
        i18n.set_language(qapp, "en")
    assert info.published_text and info.published_text not in text
    assert "closed form" not in text and " per AR" not in text
