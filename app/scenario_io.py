"""
Scenarios as files, recent files, and what the app remembers between runs.

A scenario file is small JSON, read with json.loads and checked field by field (never
pickle, never eval):

    {"schema": "shard-lab-scenario", "version": 1,
     "scenario": {"kind": "all-reduce", "n": 8, "algo": "ring", "nbytes": 1048576, "link": "nvlink4"},
     # with a link that is not a built-in preset (a calibrated one) the file carries its numbers:
     #   "scenario": {..., "link": "measured",
     #                "link_spec": {"name": "measured (MPI)", "alpha": 2.1e-06, "bw": 4.3e+10}}
     #   alpha in seconds per message, bw in bytes/s per direction (simcore.comm_sim.LinkSpec)
     # on a named machine (simcore.topology_presets) the collectives run on its wiring:
     #   "scenario": {..., "n": 16, "algo": "hier", "topology": "dgx-h100"}
     # or on a machine described in full (simcore.topology_presets.preset_from_spec):
     #   "topology": {"kind": "torus", "shape": [4, 4], "link": "tpu-v5e-ici"}
     #   "topology": {"kind": "nodes", "nodes": 2, "per_node": 8, "intra": "nvlink4", "inter": "ib-ndr400"}
     "playback": {"step": 3},          # optional: the step boundary to open at
     "note": "lecture 4, slide 12"}    # optional: free text

`load_scenario(path)` returns a `ScenarioFile` or raises `ScenarioFileError` with one clear
sentence; it never touches the app's state, so a refused file changes nothing.
`apply(model, playback, sf)` then updates the model (which re-checks the combination).

Settings (QSettings): window geometry and dock layout, theme, text scale, language, the last
scenario, the last calibrated link and the recent files. The environment variable SHARD_LAB_SETTINGS, if set, names an
.ini file to use instead of the user's settings (tests and portable installs use it).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, replace
from typing import NamedTuple

from PySide6.QtCore import QCoreApplication, QSettings

from simcore import file_numbers
from simcore.algorithms import ALGORITHMS, all_algorithm_names
from simcore.links import LINKS, LinkSpec
from simcore.topology_presets import PRESETS

from . import files
from .core import scenarios
from .state import Scenario

SCHEMA = "shard-lab-scenario"
VERSION = 1
MAX_FILE_BYTES = 64 * 1024  # a scenario is a few hundred bytes; anything bigger is not one
MAX_RECENT = 8
TOP_KEYS = {"schema", "version", "scenario", "playback", "note"}


BUILTIN_LINKS = dict(LINKS)  # the presets simcore ships; any other link is written out in full
BUILTIN_MACHINES = frozenset(PRESETS)  # the machines simcore ships; any other is written out as a spec
MEASURED_MACHINE = "measured-nodes"  # the two-link machine a calibration makes (app/classroom/calibration.py)
LINK_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
# The rule for every number a file gives, the trace files' too, and the physical bounds of a link
# (α, β), with their reasons: simcore/file_numbers.py
MAX_ALPHA, MIN_BW, MAX_BW = file_numbers.MAX_ALPHA, file_numbers.MIN_BW, file_numbers.MAX_BW
MAX_INT = file_numbers.MAX_INT


class ScenarioFileError(ValueError):
    """A file that is not a valid scenario; str(e) is one sentence for the user."""


class ScenarioFile(NamedTuple):
    scenario: Scenario
    step: int | None = None  # step boundary to open at (None: the start)
    note: str = ""
    link_spec: LinkSpec | None = None  # a custom link (scenario.link is its key): registered by apply()


def _t(text: str) -> str:
    return text


def _err(text: str, *args) -> ScenarioFileError:
    for i, a in enumerate(args, 1):
        text = text.replace(f"%{i}", str(a))
    return ScenarioFileError(text)


# ---------------------------------------------------------------------------------------
# Field rules: one function per field, each says exactly what is wrong
# ---------------------------------------------------------------------------------------
def _check_kind(v):
    if not isinstance(v, str) or v not in scenarios.KINDS:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"kind\" must be one of %1, not %2."),
                   ", ".join(scenarios.KINDS), json.dumps(v))
    return v


def _check_n(v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise _err(QCoreApplication.translate("ScenarioIO", "\"n\" must be a whole number of devices, not %1."),
                   json.dumps(v))
    if not 1 <= v <= scenarios.MAX_N:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"n\" must be between 1 and %1, not %2."),
                   scenarios.MAX_N, v)
    return v


def algo_names() -> tuple:
    """Every algorithm a scenario file may name: every op's, on a switch and on the machines (the
    registry's; validate says which fits the scenario)."""
    return tuple(all_algorithm_names())


def _check_algo(v):
    names = algo_names()
    if not isinstance(v, str) or v not in names:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"algo\" must be one of %1, not %2."),
                   ", ".join(names), json.dumps(v))
    return v


def _check_topology(v):
    """A machine by name: "" (one switch) or a simcore.topology_presets key; or a machine spec
    (an object, topology_presets.preset_from_spec), registered for this session by its key."""
    if isinstance(v, dict):
        from simcore.topology_presets import register_spec

        try:
            return register_spec(v)
        except ValueError as e:
            raise _err(QCoreApplication.translate("ScenarioIO", "\"topology\": %1."), str(e)) from None
    if v == MEASURED_MACHINE and v not in PRESETS:  # calibrated in an earlier session: remembered
        restore_measured_machine()
    if not isinstance(v, str) or (v and v not in PRESETS):
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "\"topology\" must be one of %1 (or \"\" for one switch), not %2."),
            ", ".join(PRESETS), json.dumps(v))
    return v


def check_numbers(doc, where="") -> None:
    """Every number in a parsed JSON document, before any is used, by the rule trace files follow
    too (simcore.file_numbers.check_numbers): a whole number beyond 2^53 or a float that is not
    finite (json reads 1e400 as inf, NaN as nan) is refused in one sentence naming its field (a
    list's items by their list: "shape[2]")."""
    try:
        file_numbers.check_numbers(doc, "scenario", where=where)
    except file_numbers.BadNumber as e:
        raise bad_number(e) from None


def bad_number(e: file_numbers.BadNumber) -> ScenarioFileError:
    """simcore.file_numbers' refusal in the app's language: the same sentence, translated."""
    tr = QCoreApplication.translate
    if e.rule == "huge":
        text = (tr("ScenarioIO", "\"%1\" is a number with %2 digits: no field of a scenario is that large.")
                if e.what == "scenario" else
                tr("ScenarioIO", "\"%1\" is a number with %2 digits: no field of a trace is that large."))
        return _err(text, e.field, len(e.value.lstrip("-")))
    if e.rule == "not-finite":
        return _err(tr("ScenarioIO", "\"%1\" must be a finite number, not %2."), e.field, e.value)
    if e.rule == "too-large":
        return _err(tr("ScenarioIO", "\"%1\" must be at most %2, not %3."), e.field,
                    file_numbers.limit_text(e.limit), e.value)
    if e.rule == "negative":
        return _err(tr("ScenarioIO", "\"%1\" must be zero or more, not %2."), e.field, e.value)
    if e.rule == "alpha":
        return _err(tr("ScenarioIO", "\"%1\" must be seconds per message from 0 to %2, not %3."), e.field,
                    f"{MAX_ALPHA:g}", e.value)
    return _err(tr("ScenarioIO", "\"%1\" must be bytes per second from %2 (1 MB/s) to %3 (100 TB/s), not %4."),
                e.field, f"{MIN_BW:g}", f"{MAX_BW:g}", e.value)


def _check_nbytes(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"nbytes\" must be a positive number of bytes, not %1."),
                   json.dumps(v))
    if v > scenarios.MAX_BYTES:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"nbytes\" must be at most 1 TiB, not %1."), v)
    return float(v)


def _check_link(v):
    if not isinstance(v, str) or v not in LINKS:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"link\" must be one of %1, not %2."),
                   ", ".join(LINKS), json.dumps(v))
    return v


def _check_link_spec(v) -> LinkSpec:
    """{"name": text, "alpha": s per message, "bw": bytes/s per direction} -> LinkSpec."""
    if not isinstance(v, dict) or set(v) != {"name", "alpha", "bw"}:
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "\"link_spec\" must be an object with exactly \"name\", \"alpha\" and \"bw\"."))
    name, alpha, bw = v["name"], v["alpha"], v["bw"]
    if not isinstance(name, str) or not 0 < len(name.strip()) <= 80:
        raise _err(QCoreApplication.translate("ScenarioIO", "\"link_spec.name\" must be a short text."))
    try:  # the bounds a trace file's link keeps too (simcore.file_numbers.check_link)
        alpha, bw = file_numbers.check_link(alpha, bw, "link_spec", "scenario")
    except file_numbers.BadNumber as e:
        raise bad_number(e) from None
    return LinkSpec(name.strip(), alpha, bw)


FIELD_RULES = {"kind": _check_kind, "n": _check_n, "algo": _check_algo, "nbytes": _check_nbytes,
               "link": _check_link}
# the last three: a mesh scenario's
OPTIONAL_FIELDS = {"link_spec", "topology", "machine_links", "mesh", "program", "params"}


def is_custom_link(key: str) -> bool:
    """A link that is not one of simcore's presets as shipped (a calibrated one)."""
    return key in LINKS and BUILTIN_LINKS.get(key) != LINKS[key]


def link_to_dict(spec: LinkSpec) -> dict:
    return {"name": spec.name, "alpha": spec.alpha, "bw": spec.bw}


def scenario_to_dict(sc: Scenario) -> dict:
    d = asdict(sc)
    if float(d["nbytes"]).is_integer():
        d["nbytes"] = int(d["nbytes"])  # 1048576, not 1048576.0
    if is_custom_link(sc.link):  # its numbers travel with it: another machine has no such preset
        d["link_spec"] = link_to_dict(LINKS[sc.link])
    for k in ("mesh", "program", "params"):  # only a mesh scenario has them: other files read as before
        if not d.get(k):
            d.pop(k, None)
    if not d.get("topology"):
        d.pop("topology", None)  # one switch: the file reads as before machines existed
    else:
        from simcore.topology_presets import spec_of

        spec = spec_of(d["topology"]) or _session_machine_spec(sc)
        if spec is not None:  # a machine made from a spec: the spec travels, not its session key
            d["topology"] = spec
            # and so do its calibrated links' numbers: another computer has no such LINKS keys
            keys = [spec[k] for k in ("intra", "inter", "link") if k in spec]
            links = {k: link_to_dict(LINKS[k]) for k in keys if is_custom_link(k)}
            if links:
                d["machine_links"] = links
    return d


def _session_machine_spec(sc: Scenario):
    """A machine of nodes this session made (a calibration's "measured-nodes") as the spec of its
    n devices, or None for a machine simcore ships."""
    preset = PRESETS.get(sc.topology)
    if preset is None or sc.topology in BUILTIN_MACHINES or preset.kind != "nodes" or preset.inter is None:
        return None
    P = preset.per_node
    spec = {"kind": "nodes", "nodes": max(1, -(-sc.n // P)), "per_node": P, "intra": preset.intra,
            "inter": preset.inter}
    if preset.base:
        spec["base"] = preset.base
    return spec


def _check_machine_links(v, topology):
    """ "machine_links": {LINKS key: {"name", "alpha", "bw"}} of a machine spec's calibrated links.
    Registers each under its key (or a free one if this session's key holds other numbers) and
    returns the topology spec naming the keys used."""
    if not isinstance(v, dict) or not v or not isinstance(topology, dict):
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "\"machine_links\" must be an object of links, beside a \"topology\" object."))
    rename = {}
    for key, spec in v.items():
        if not isinstance(key, str) or not LINK_KEY.fullmatch(key):
            raise _err(QCoreApplication.translate(
                "ScenarioIO", "\"link\" must be a short name (letters, digits, - _ .), not %1."), json.dumps(key))
        link = _check_link_spec(spec)
        new = link_key_for(key, link)
        register_link(new, link)
        rename[key] = new
    return {k: (rename.get(x, x) if k in ("intra", "inter", "link") and isinstance(x, str) else x)
            for k, x in topology.items()}


def link_key_for(key: str, spec: LinkSpec) -> str:
    """The LINKS key to use for a custom link read from a file: its own key if free (or holding
    the same numbers), a key already holding the same numbers, else key-2, key-3 …"""
    if LINKS.get(key) == spec:
        return key
    for k, v in LINKS.items():
        if v == spec:
            return k
    k, new = 1, key
    while new in LINKS:
        k += 1
        new = f"{key}-{k}"
    return new


def register_link(key: str, spec: LinkSpec):
    """Make a custom link available under `key` (the model and the link menu read LINKS)."""
    LINKS[key] = spec


def scenario_from_dict(data) -> tuple[Scenario, LinkSpec | None]:
    """Check every field of a scenario dict; raise ScenarioFileError naming the first bad one.
    Returns the scenario and, for a custom link, its numbers (not registered yet)."""
    if not isinstance(data, dict):
        raise _err(QCoreApplication.translate("ScenarioIO", "\"scenario\" must be an object with the fields %1."),
                   ", ".join(FIELD_RULES))
    unknown = sorted(set(data) - set(FIELD_RULES) - OPTIONAL_FIELDS)
    if unknown:
        raise _err(QCoreApplication.translate("ScenarioIO", "Unknown scenario field %1."), json.dumps(unknown[0]))
    missing = [k for k in FIELD_RULES if k not in data]
    if missing:
        raise _err(QCoreApplication.translate("ScenarioIO", "The scenario field %1 is missing."),
                   json.dumps(missing[0]))
    spec = None
    if "link_spec" in data:
        spec = _check_link_spec(data["link_spec"])
        key = data["link"]
        if not isinstance(key, str) or not LINK_KEY.fullmatch(key):
            raise _err(QCoreApplication.translate(
                "ScenarioIO", "\"link\" must be a short name (letters, digits, - _ .), not %1."), json.dumps(key))
        rules = dict(FIELD_RULES, link=lambda v: link_key_for(v, spec))
    else:
        rules = FIELD_RULES
    fields = {k: rule(data[k]) for k, rule in rules.items()}
    if "topology" in data:
        topology = data["topology"]
        if "machine_links" in data:
            topology = _check_machine_links(data["machine_links"], topology)
        fields["topology"] = _check_topology(topology)
    for k in ("mesh", "program", "params"):  # a mesh scenario's: strings, checked with the rest by validate below
        if k in data:
            if not isinstance(data[k], str):
                raise _err(QCoreApplication.translate("ScenarioIO", "\"%1\" must be text, not %2."), k,
                           json.dumps(data[k]))
            fields[k] = data[k]
    sc = Scenario(**fields)
    try:
        # the combination (e.g. a size n cannot split): the app's one rule; a custom link is
        # only registered when the scenario is applied, so check the rest with a preset
        scenarios.validate(replace(sc, link=next(iter(BUILTIN_LINKS))) if spec else sc)
    except ValueError as e:
        raise ScenarioFileError(str(e)) from None
    return sc, spec


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------
def dumps(sc: Scenario, step: int | None = None, note: str = "") -> str:
    doc = {"schema": SCHEMA, "version": VERSION, "scenario": scenario_to_dict(sc)}
    if step is not None:
        doc["playback"] = {"step": int(step)}
    if note:
        doc["note"] = note
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def loads(text: str) -> ScenarioFile:
    """Parse and check a scenario document (see module docstring)."""
    try:
        doc = json.loads(text.removeprefix("\ufeff"))  # a byte-order mark (Windows Notepad) is not content
    except json.JSONDecodeError as e:
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "This is not a scenario file: it is not valid JSON (line %1, column %2)."),
            e.lineno, e.colno) from None
    except RecursionError:  # json nests by recursion: [[[[… thousands deep exhausts the stack
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "This is not a scenario file: its JSON is nested far too deeply.")) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "This is not a Shard Lab scenario file (its \"schema\" is not \"%1\")."), SCHEMA)
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _err(QCoreApplication.translate("ScenarioIO", "The scenario file has no valid \"version\"."))
    if version != VERSION:
        raise _err(QCoreApplication.translate(
            "ScenarioIO", "Scenario file version %1 is not supported: this Shard Lab reads version %2."),
            version, VERSION)
    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise _err(QCoreApplication.translate("ScenarioIO", "Unknown field %1 in the scenario file."),
                   json.dumps(unknown[0]))
    check_numbers(doc)
    if "scenario" not in doc:
        raise _err(QCoreApplication.translate("ScenarioIO", "The scenario file has no \"scenario\"."))
    sc, spec = scenario_from_dict(doc["scenario"])
    step = None
    if "playback" in doc:
        pb = doc["playback"]
        if not isinstance(pb, dict) or set(pb) - {"step"}:
            raise _err(QCoreApplication.translate("ScenarioIO", "\"playback\" may only hold \"step\"."))
        step = pb.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
            raise _err(QCoreApplication.translate("ScenarioIO", "\"playback.step\" must be a whole number >= 0."))
    note = doc.get("note", "")
    if not isinstance(note, str):
        raise _err(QCoreApplication.translate("ScenarioIO", "\"note\" must be text."))
    return ScenarioFile(sc, step, note, spec)


def load_scenario(path: str) -> ScenarioFile:
    """Read and check a scenario file. Raises ScenarioFileError (one sentence) on any problem.
    A saved run (a trace file, by its schema) is opened too: see load_run_file."""
    run_file = load_run_file(path)
    if run_file is not None:
        return run_file
    name = os.path.basename(os.fspath(path))
    try:
        files.check_readable(path)  # stat only: a FIFO or /proc/kmsg would block the reading thread
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise _err(QCoreApplication.translate(
                "ScenarioIO", "%1 is not a scenario file: it is %2 bytes, a scenario is under %3."),
                name, size, MAX_FILE_BYTES)
        raw = files.read_bytes(path, MAX_FILE_BYTES)
    except files.UnsafeFile as e:
        raise ScenarioFileError(str(e)) from None
    except OSError as e:
        raise _err(QCoreApplication.translate("ScenarioIO", "Cannot read %1: %2."), name, e.strerror or e) from None
    try:
        text = raw.decode("utf-8-sig")  # with or without a byte-order mark
    except UnicodeDecodeError:
        raise _err(QCoreApplication.translate("ScenarioIO", "%1 is not a scenario file: it is not UTF-8 text."),
                   name) from None
    try:
        return loads(text)
    except ScenarioFileError as e:
        raise ScenarioFileError(f"{name}: {e}") from None


def save_scenario(path: str, sc: Scenario, step: int | None = None, note: str = ""):
    """Write a scenario file atomically (ExportError with a clear sentence if it cannot)."""
    text = dumps(sc, step, note)

    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    files.atomic_write(path, write)


def apply(model, playback, sf: ScenarioFile) -> bool:
    """Make `sf` the current scenario. False (model unchanged, its error signal says why) if refused."""
    if isinstance(sf, RunFile):
        return apply_run(model, playback, sf.run)
    if sf.link_spec is not None:
        register_link(sf.scenario.link, sf.link_spec)
    fields = scenario_to_dict(sf.scenario)
    fields.pop("link_spec", None)
    fields["nbytes"] = float(fields["nbytes"])
    fields["topology"] = sf.scenario.topology  # a file without one means one switch
    if not model.update(**fields):
        return False
    if playback is not None:  # on the new run, once the worker has built it
        model.after_build(lambda: playback.seek_step(sf.step) if sf.step is not None else playback.to_start())
    return True


# ---------------------------------------------------------------------------------------
# Saved runs: a file is a scenario or a trace, told apart by its schema (app/opened_run.py)
# ---------------------------------------------------------------------------------------
class RunFile(NamedTuple):
    """A saved run opened as a file: fields as ScenarioFile's, and the Run to play."""

    scenario: Scenario
    step: int | None = None
    note: str = ""
    link_spec: LinkSpec | None = None
    run: object = None


def load_run_file(path: str) -> RunFile | None:
    """The run in `path` if the file is a trace (by its schema), else None (a scenario file, or
    not a file: load_scenario says which). ScenarioFileError (one sentence) for a bad trace."""
    from . import files
    from .opened_run import is_trace_file, load_run

    try:
        files.check_readable(path)
    except (files.UnsafeFile, OSError):
        return None
    if not is_trace_file(path):
        return None
    try:
        run = load_run(path)
    except file_numbers.BadNumber as e:  # the trace's number refused as a scenario's is, in this language
        raise ScenarioFileError(f"{e.file}: {bad_number(e)}" if e.file else str(bad_number(e))) from None
    except ValueError as e:
        raise ScenarioFileError(str(e)) from None
    return RunFile(run.scenario, run=run)


def apply_run(model, playback, run) -> bool:
    """Show a saved run (app/opened_run.py): the model takes it as it is, the clock goes to the start."""
    model.scenario, model.run = run.scenario, run
    model.changed.emit(run)
    if playback is not None:
        playback.to_start()
    return True


# ---------------------------------------------------------------------------------------
# Settings and recent files
# ---------------------------------------------------------------------------------------
def settings() -> QSettings:
    path = os.environ.get("SHARD_LAB_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("ShardLab", "Shard Lab")


def recent_files() -> list[str]:
    """Recently opened or saved scenario files, newest first, existing ones only."""
    value = settings().value("files/recent", [])
    if isinstance(value, str):
        value = [value]
    return [p for p in (value or []) if isinstance(p, str) and os.path.isfile(p)][:MAX_RECENT]


def last_folder() -> str:
    """The folder a file dialog opens in: the last one a file was opened from or saved to
    (remember_folder), else the most recent scenario's, else the home folder."""
    folder = settings().value("files/last_folder", "")
    if isinstance(folder, str) and folder and os.path.isdir(folder):
        return folder
    recent = recent_files()
    return os.path.dirname(recent[0]) if recent else os.path.expanduser("~")


def remember_folder(path: str):
    """A file dialog answered with `path`: the next dialog opens in its folder."""
    if path:
        settings().setValue("files/last_folder", os.path.dirname(os.path.abspath(path)))


def add_recent(path: str):
    path = os.path.abspath(path)
    files = [path] + [p for p in recent_files() if os.path.abspath(p) != path]
    settings().setValue("files/recent", files[:MAX_RECENT])


def clear_recent():
    settings().remove("files/recent")


def save_last_scenario(sc: Scenario, step: int | None = None):
    settings().setValue("session/last_scenario", dumps(sc, step))


def last_scenario() -> ScenarioFile | None:
    """The scenario open when the app last closed (None if none or no longer valid)."""
    text = settings().value("session/last_scenario", None)
    if not isinstance(text, str):
        return None
    try:
        return loads(text)
    except ScenarioFileError:
        return None


def remember_calibration(spec: LinkSpec):
    """The last calibrated link ("Use as link"), offered again in the next session."""
    settings().setValue("calibration/last_link", json.dumps(link_to_dict(spec)))


def remembered_calibration() -> LinkSpec | None:
    text = settings().value("calibration/last_link", None)
    if not isinstance(text, str):
        return None
    try:
        d = json.loads(text)
        check_numbers(d)
        return _check_link_spec(d)
    except (ValueError, RecursionError):
        return None


def install_measured_machine(intra: LinkSpec, inter: LinkSpec, per_node: int, source: str, algos=None) -> str:
    """The machine of nodes a two-link calibration gives: intra inside a node, inter on
    every GPU's NIC, registered as LINKS "measured" / "measured-inter" and PRESETS "measured-nodes"
    for this session. algos: {op: registry algorithm} it runs across nodes by default (the one the
    calibration fitted, nccl_log.Calibration.machine_algos). Returns its key."""
    from simcore.calibrate import MeasuredPreset

    LINKS["measured"], LINKS["measured-inter"] = intra, inter
    PRESETS[MEASURED_MACHINE] = MeasuredPreset(MEASURED_MACHINE, f"Measured ({per_node} per node)", "h100", "nodes",
                                               int(per_node), "measured", "measured-inter", max_devices=256,
                                               source=source, algos=tuple(sorted((algos or {}).items())))
    return MEASURED_MACHINE


def remember_measured_machine(intra: LinkSpec, inter: LinkSpec, per_node: int, source: str, algos=None):
    """The calibrated machine, restored in a later session when a scenario names it."""
    settings().setValue("calibration/measured_machine", json.dumps(
        {"intra": link_to_dict(intra), "inter": link_to_dict(inter), "per_node": int(per_node),
         "source": str(source)[:400], "algos": dict(algos or {})}))


def restore_measured_machine() -> bool:
    """Install the remembered calibrated machine (remember_measured_machine); False if there is
    none or what is stored is not valid."""
    text = settings().value("calibration/measured_machine", None)
    if not isinstance(text, str):
        return False
    try:
        d = json.loads(text)
        check_numbers(d)
        intra, inter = _check_link_spec(d["intra"]), _check_link_spec(d["inter"])
        P = d["per_node"]
        if isinstance(P, bool) or not isinstance(P, int) or not 1 <= P <= 256:
            return False
        algos = d.get("algos", {})
        if not isinstance(algos, dict) or not all(isinstance(a, str) and a in ALGORITHMS.get(o, {})
                                                  for o, a in algos.items()):
            algos = {}
        install_measured_machine(intra, inter, P, str(d.get("source", "")), algos)
        return True
    except (ValueError, KeyError, TypeError, RecursionError):
        return False


def save_window(window):
    s = settings()
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())


def restore_window(window) -> bool:
    s = settings()
    geo, state = s.value("window/geometry"), s.value("window/state")
    ok = bool(geo) and window.restoreGeometry(geo)
    if state:
        window.restoreState(state)
    return ok
