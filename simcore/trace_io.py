"""Trace files: writing a trace as Chrome trace-event JSON, versioned JSON or CSV, and reading
the JSON back.

Trace.write, write_json, write_chrome, write_csv and from_dict call these functions (import
the Trace methods, not this module). Every writer takes a path (gzipped when it ends in .gz)
or a file object and streams block by block, never holding the whole file; the Chrome
writer formats a block of messages at once as byte matrices (see _Rows).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import json
import os
import warnings
import zlib
from array import array
from functools import cache

import numpy as np

from .contributors import who_text
from .trace_records import _FIELDS, ALL, ROW, SCHEMA, SCHEMA_VERSION, SWITCH, Collective, Compute, Initial


def write(trace, path: str, fmt: str = "chrome", flows: bool = False):
    """
    Stream the trace to `path` as fmt ("chrome", "json" or "csv"; gzipped when the name ends
    in .gz) through a temporary file moved into place, so an interrupted write never leaves
    half a file. Raises OSError (the temporary file is removed).
    """
    tmp = path + ".part" + (".gz" if path.endswith(".gz") else "")
    try:
        if fmt == "chrome":
            trace.write_chrome(tmp, flows=flows)
        elif fmt == "csv":
            trace.write_csv(tmp)
        else:
            trace.write_json(tmp)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise

def write_json(trace, dest):
    """Write the versioned JSON to a path or text file object; a path ending in .gz is gzipped.
    Version 3: collectives, keys, computes and meta as plain JSON; every message column (and the
    explicit contributor lists) as a compact column (see encode_column), last in the file."""
    trace.flush()
    m = trace._len
    with _open_text(dest) as f:
        f.write(f'{{"schema": {json.dumps(SCHEMA)}, "version": {SCHEMA_VERSION},\n"collectives": [')
        f.write(",\n".join(json.dumps(_coll_to_dict(c)) for c in trace.collectives))
        f.write(f'],\n"keys": {json.dumps(trace._keys)},\n"n_messages": {m},\n"explicit": ')
        f.write(json.dumps(encode_column(np.frombuffer(trace._explicit, dtype=np.int32))))
        f.write(f',\n"compute_fields": {json.dumps(Compute._fields)},\n"computes": [')
        f.write(",\n".join(json.dumps(_compute_to_list(c)) for c in trace.computes))
        f.write(f'],\n"meta": {json.dumps(getattr(trace, "meta", {}))},\n"columns": {{')
        for i, name in enumerate(ROW.names):
            f.write((",\n" if i else "") + f'"{name}": ' + json.dumps(encode_column(trace._cols[name][:m])))
        f.write("}}\n")


# A compact column: {"dtype": "<f8", "shape": [m], "zlib": base64 of the zlib-compressed
# little-endian bytes}. A million messages' columns are 65 MB of numbers, 5 MB compressed (a
# ring's columns repeat); read back with np.frombuffer, no Python number per value.
_ENCODE_BLOCK = 1 << 20  # values compressed at a time: the writer never copies a whole column


def encode_column(values: np.ndarray) -> dict:
    """A 1-D array as a compact column (dtype kept, little-endian on disk)."""
    values = np.asarray(values)
    dtype = values.dtype.newbyteorder("<") if values.dtype.byteorder in "=>" else values.dtype
    z = zlib.compressobj(1)  # level 1: 5 MB for a million messages' columns, at ~150 MB/s
    parts = [z.compress(np.ascontiguousarray(values[lo:lo + _ENCODE_BLOCK], dtype=dtype).tobytes())
             for lo in range(0, len(values), _ENCODE_BLOCK)]
    parts.append(z.flush())
    return {"dtype": dtype.str, "shape": [len(values)], "zlib": base64.b64encode(b"".join(parts)).decode("ascii")}


def decode_column(col, name: str, dtype, m: int, keep: int | None = None) -> np.ndarray:
    """
    A compact column of m values of `dtype` back as an array (its first `keep` values only, if
    given: only they are decompressed). ValueError, one sentence, for a column that is
    truncated, corrupt, of another dtype or of another length.
    """
    dtype = _check_column(col, name, dtype, m)
    keep = m if keep is None else min(keep, m)
    try:
        raw = _inflate(base64.b64decode(col["zlib"], validate=True), keep * dtype.itemsize, whole=keep == m)
    except (binascii.Error, zlib.error):
        raw = None
    if raw is None:
        raise ValueError(f"column {name} is truncated or corrupt (it does not decompress to {m:,} values)")
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False)


def _check_column(col, name: str, dtype, m: int) -> np.dtype:
    """A compact column's dtype, shape and size checked before anything is allocated for it
    (zlib packs at most ~1032 bytes into one: a shape larger than that is a lie)."""
    dtype = np.dtype(dtype)
    if not isinstance(col, dict) or not isinstance(col.get("zlib"), str):
        raise ValueError(f"column {name} is not a compact column")
    if col.get("dtype") != dtype.newbyteorder("<").str and col.get("dtype") != dtype.str:
        raise ValueError(f"column {name} has dtype {col.get('dtype')!r}, not {dtype.str!r}")
    if col.get("shape") != [m]:
        raise ValueError(f"column {name} has shape {col.get('shape')!r} for {m} messages")
    if m * dtype.itemsize > 1100 * len(col["zlib"]) + 64:
        raise ValueError(f"column {name} is truncated or corrupt (too short for {m:,} values)")
    return dtype


def _inflate(data: bytes, want: int, whole: bool):
    """The first `want` bytes zlib data holds (None if it holds fewer; whole: exactly `want`)."""
    d = zlib.decompressobj()
    raw = d.decompress(data, max(want, 1))  # max_length 0 would mean no limit
    if len(raw) != want:
        return None
    if whole and (d.decompress(d.unconsumed_tail, 1) or not d.eof or d.unused_data):
        return None
    return raw


# A saved run the app will open: at most this many messages (a few hundred MB of columns) and
# a file of at most this many bytes (a gzipped file: its compressed size).
MAX_MESSAGES = 20_000_000
MAX_FILE_BYTES = 2 << 30


def load(cls, path) -> "Trace":  # cls: simcore.trace.Trace, handed in (this module does not import it)
    """
    Read a saved trace (Trace.save / --format json; gzipped when the name ends in .gz) and check
    it (check_trace). Raises ValueError with one sentence naming the file and the problem. A
    version-3 file of more than MAX_MESSAGES messages is read up to the collectives that fit,
    and trace.note says so in one sentence naming the file ("" when the whole file was read).
    """
    import gzip

    from .file_numbers import BadNumber

    path = os.fspath(path)
    name = os.path.basename(path)
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{name} is {size / 2**30:.1f} GiB; a trace file is at most "
                             f"{MAX_FILE_BYTES / 2**30:.0f} GiB")
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
        tr = _from_json_fast(cls, text)  # version 2 as write_json laid it out
        if tr is None:  # version 3 (its columns are a few long strings), version 1, hand-edited
            try:
                data = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as e:
                raise ValueError(f"not a trace file: {e}") from None
            tr = from_dict(cls, data, max_messages=MAX_MESSAGES)
        check_trace(tr)
        if tr.note:
            tr.note = f"{name}: {tr.note}."
    except BadNumber as e:  # kept as its kind: the app says it in its own language
        raise e.in_file(name) from None
    except ValueError as e:
        if str(e).startswith(name):
            raise
        raise ValueError(f"{name}: {e}") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError):
        raise ValueError(f"{name}: the trace file is truncated or corrupt (it cannot be decompressed or decoded)") from None
    except OSError as e:
        raise ValueError(f"cannot read {name}: {e.strerror or e}") from None
    return tr


def _from_json_fast(cls, text: str):
    """
    A version-2 file as write_json laid it out (columns of numbers as text), read column by
    column straight into arrays (a million messages: json.loads of the whole file would build 14
    million Python numbers first). Returns None for any other layout or version: the general
    reader takes over.
    """
    head = text.find('"columns": {')
    end = text.find('},\n"explicit"', head)
    if head < 0 or end < 0:
        return None
    try:
        data = json.loads(text[:head] + '"columns": {}' + text[end + 1:])
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("version") != 2 or data.get("schema") != SCHEMA:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns (and stops) at text it cannot parse: not this layout
            data["columns"] = _columns_fast(text[head:end])
    except (ValueError, DeprecationWarning):
        return None
    if data["columns"] is None:
        return None
    try:
        return from_dict(cls, data)
    except ValueError:
        return None


def _columns_fast(body: str):
    """The columns of write_json's "columns" object, each parsed straight into an array (None: not that layout)."""
    cols, pos = {}, 0
    for name in ROW.names:
        lo = body.find(f'"{name}": [', pos)
        if lo < 0:
            return None
        lo += len(name) + 5
        hi = body.find("]", lo)
        part = body[lo:hi]
        pos = hi
        if ROW[name].kind == "f":  # numpy's own parser: as fast as json's for floats, without the list
            cols[name] = np.fromstring(part, dtype=float, sep=",") if part else np.zeros(0)
        else:  # small integers and true/false: json's C parser is several times faster here
            cols[name] = np.array(json.loads("[" + part + "]"), dtype=ROW[name])
    return cols


def check_trace(tr) -> None:
    """
    Raise ValueError (one sentence) if a trace could not have come from a Comm: a message to
    or from a device its collective does not have, negative or non-finite bytes, a message
    that lands before it starts, collectives whose messages overlap or run past the trace,
    or more than MAX_MESSAGES messages.
    """
    m = tr.n_messages
    if m > MAX_MESSAGES:
        raise ValueError(f"it has {m:,} messages; the app shows at most {MAX_MESSAGES:,}")
    r = tr.rows()
    nb, t0, t1 = r["nbytes"], r["t_start"], r["t_end"]
    if m and not (np.isfinite(nb).all() and np.isfinite(t0).all() and np.isfinite(t1).all()):
        raise ValueError("a message has a time or size that is not a finite number")
    if m and nb.min() < 0:
        i = int(np.argmin(nb))
        raise ValueError(f"message {i} has negative bytes ({nb[i]:g})")
    if m and nb.max() > MAX_BYTES:
        i = int(np.argmax(nb))
        raise ValueError(f"message {i} has {nb[i]:g} bytes, more than a trace holds ({MAX_BYTES:g})")
    if m and (t1 < t0).any():
        i = int(np.flatnonzero(t1 < t0)[0])
        raise ValueError(f"times out of order: message {i} lands at {t1[i]:.9g} s, before it starts at {t0[i]:.9g} s")
    problem = _first_collective_problem(tr, r)
    if problem:
        raise ValueError(problem)
    for i, op in enumerate(tr.computes):
        if not (op.t_end >= op.t_start) or op.flops < 0 or op.nbytes < 0:
            raise ValueError(f"op {i} ({op.label}) ends before it starts or has negative FLOPs or bytes")


def _first_collective_problem(tr, r) -> str:
    """
    The first thing wrong with the collectives, in their order, or "": ids and message ranges
    out of order, ends before starts, and a message to or from a device its collective does not
    have, with a chunk it does not have, or landing after it ends. Vectorised: a recording of
    20,000 small collectives is checked as fast as one large one.
    """
    colls, m = tr.collectives, tr.n_messages
    if not colls:
        return ""
    ids, n, n_chunks, first, last = np.array([(c.id, c.n, c.n_chunks, c.first_msg, c.last_msg) for c in colls],
                                             dtype=np.int64).T
    t_start, t_end = np.array([(c.t_start, c.t_end) for c in colls], dtype=float).reshape(-1, 2).T
    before = np.concatenate([[0], last[:-1]])
    bad = (ids != np.arange(len(colls))) | (first < before) | (first > last) | (last > m)
    bad_time = ~(t_end >= t_start) | (n < 1) | (n_chunks < 0)
    found = []  # (collective, order of the checks within one collective, sentence)
    k = _first(bad)
    if k is not None:
        c = colls[k]
        found.append((k, 0, f"collective {c.id}'s messages [{c.first_msg}, {c.last_msg}) are out of order "
                            f"or past the {m} messages"))
    valid = len(colls) if k is None else k  # the ranges of these are in order: message checks apply
    k = _first(bad_time[:valid])
    if k is not None:
        found.append((k, 1, f"collective {colls[k].id} ends before it starts or has no devices"))
    if valid and last[valid - 1] > 0:
        hi = int(last[valid - 1])
        i = np.arange(hi)
        owner = np.searchsorted(first[:valid], i, side="right") - 1  # the collective message i is in, if any
        inside = (owner >= 0) & (i < last[np.maximum(owner, 0)])
        own_n, own_chunks = n[owner], np.maximum(n_chunks[owner], 1)
        for order, side in ((2, "src"), (3, "dst")):
            v = r[side][:hi]
            j = _first(inside & ((v < -1) | (v >= own_n)))
            if j is not None:
                c = colls[owner[j]]
                found.append((owner[j], order, f"message {j} goes {'from' if side == 'src' else 'to'} GPU "
                                               f"{int(v[j])}, which does not exist (collective {c.id} has GPUs "
                                               f"0..{c.n - 1})"))
        ch = r["chunk"][:hi]
        j = _first(inside & ((ch < -1) | (ch >= own_chunks)))
        if j is not None:
            c = colls[owner[j]]
            found.append((owner[j], 4, f"message {j} carries chunk {int(ch[j])}, which collective {c.id} "
                                       f"does not have (chunks 0..{c.n_chunks - 1})"))
        busy = np.flatnonzero(last[:valid] > first[:valid])
        # the latest landing in each collective: reduceat runs from one first message to the next,
        # so a collective followed by messages of none (a gap) is taken again on its own
        late = np.maximum.reduceat(r["t_end"][:last[busy[-1]]], first[busy]) if len(busy) else np.zeros(0)
        gap = np.flatnonzero(last[busy][:-1] < first[busy][1:])
        for g in gap.tolist():
            late[g] = r["t_end"][first[busy[g]]:last[busy[g]]].max()
        ends = t_end[busy]
        j = _first(late > ends + 1e-9 * np.abs(ends) + 1e-15)
        if j is not None:
            c = colls[busy[j]]
            found.append((busy[j], 5, f"times out of order: a message of collective {c.id} lands at "
                                      f"{late[j]:.9g} s, after the collective ends at {c.t_end:.9g} s"))
    return min(found)[2] if found else ""


def _first(mask):
    """The index of the first True in a boolean array, or None."""
    i = int(np.argmax(mask)) if len(mask) else 0
    return i if len(mask) and mask[i] else None


def from_dict(cls, data: dict, max_messages: int | None = None) -> "Trace":
    """
    A trace from its JSON as a dict (version 1, 2 or 3). max_messages: a version-3 file with
    more messages is read up to its first collectives that fit (only their part of each column
    is decompressed) and trace.note says so; ValueError if not even the first one fits.
    """
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"not a trace file (expected schema {SCHEMA!r})")
    version = data.get("version")
    if version not in (1, 2, SCHEMA_VERSION):
        raise ValueError(f"trace version {version!r} is not supported (this reads 1, 2 and {SCHEMA_VERSION})")
    _check_file_numbers(data)
    tr = cls()
    colls, keep = data.get("collectives"), None
    if version == SCHEMA_VERSION and max_messages is not None and isinstance(colls, list):
        keep, colls = _first_that_fit(data, max_messages)
    try:
        if version == 1:
            for row in data["messages"]:
                tr.add_message(*_msg_from_list(row))
        else:
            _read_columns(tr, data, keep)
        tr.flush()
        tr.collectives = [_coll_from_dict(c) for c in colls]
        # files from before computes were traced have none
        tr.computes = [_compute_from_list(row) for row in data.get("computes", [])]
        meta = data.get("meta", {})
        tr.meta = dict(meta) if isinstance(meta, dict) else {}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise ValueError(f"corrupt trace file: {e}") from None
    if keep is not None and len(colls) < len(data["collectives"]):
        t_cut = max((c.t_end for c in tr.collectives), default=0.0)
        tr.computes = [op for op in tr.computes if op.t_start <= t_cut]
        tr.note = (f"it has {int(data['n_messages']):,} messages, more than the {max_messages:,} the app shows: "
                   f"the first {len(colls)} of its {len(data['collectives'])} collectives ({keep:,} messages) "
                   f"are shown")
    return tr


# sizes, times, counts and message ranges: never below zero (a chunk of -1 is "all", a src of
# -1 the switch: those are checked against their collective by check_trace)
MAX_BYTES = float(2**53)  # 9 PB: a collective or a message moving more is a typo, not a run
_AT_LEAST_ZERO = ("nbytes", "t_start", "t_end", "n", "n_chunks", "n_steps", "first_msg", "last_msg", "n_messages",
                  "flops")


def _check_file_numbers(data: dict):
    """Every number of the file's JSON (not its compressed columns: check_trace checks those), by
    the one rule scenario files follow too (simcore.file_numbers), and its link's α and β within
    the same physical bounds. BadNumber (a ValueError, one sentence naming the field)."""
    from .file_numbers import check_link, check_numbers

    check_numbers({k: v for k, v in data.items() if k not in ("columns", "explicit")}, "trace",
                  _AT_LEAST_ZERO, paths=True, at_most={"nbytes": MAX_BYTES})
    link = data.get("meta", {}).get("link") if isinstance(data.get("meta"), dict) else None
    if isinstance(link, dict) and ("alpha" in link or "bw" in link):
        check_link(link.get("alpha"), link.get("bw"), "meta.link", "trace")


def _first_that_fit(data: dict, max_messages: int):
    """(messages, collectives): the longest run of first collectives whose messages all lie in
    the first max_messages (every message, when the file has no more than that)."""
    try:
        m, colls = int(data["n_messages"]), data["collectives"]
        if m <= max_messages:
            return None, colls
        k = 0
        while k < len(colls) and int(colls[k]["last_msg"]) <= max_messages:
            k += 1
        keep = int(colls[k - 1]["last_msg"]) if k else 0
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"corrupt trace file: {e}") from None
    if keep == 0:
        raise ValueError(f"it has {m:,} messages; the app shows at most {max_messages:,}, "
                         f"and its first collective alone has more")
    return keep, colls[:k]


def _read_columns(trace, data, keep: int | None = None):
    """The message columns (lists of numbers in version 2, compact in version 3; the first
    `keep` messages only, if given) and the key table into `trace`."""
    trace._keys = [tuple(str(s) for s in k) for k in data["keys"]]
    if any(len(k) != 4 for k in trace._keys):
        raise ValueError("a key must be [op, algo, label, phase]")
    trace._key_index = {k: i for i, k in enumerate(trace._keys)}
    cols, m = data["columns"], int(data["n_messages"])
    compact = data["version"] >= 3
    if compact:
        for name in ROW.names:  # every column checked first: a hand-edited n_messages allocates nothing
            _check_column(cols[name], name, ROW[name], m)
        # the decoded arrays become the columns as they are (read-only, as readers see every column;
        # an append copies them into new arrays first, as it does whenever the columns are full)
        trace._cols = {name: decode_column(cols[name], name, ROW[name], m, keep) for name in ROW.names}
        trace._len = trace._cap = m if keep is None else keep
    else:
        lo, hi = trace.grow(m)
        for name in ROW.names:
            col = np.asarray(cols[name], dtype=ROW[name])
            if col.shape != (m,):
                raise ValueError(f"column {name} has {col.size} values for {m} messages")
            trace._cols[name][lo:hi] = col
    rows = trace.rows()
    ex = data.get("explicit", [])
    if compact:
        shape = ex.get("shape") if isinstance(ex, dict) else None
        n_ex = shape[0] if isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int) else -1
        trace._explicit = array("i", decode_column(ex, "explicit", np.int32, n_ex).tobytes())
    else:
        trace._explicit = array("i", [int(v) for v in ex])
    if len(rows) and (rows["key"].min() < 0 or rows["key"].max() >= len(trace._keys)):
        raise ValueError("a message's key is out of range")
    ex = rows["w2"] == 0
    if np.any(ex) and np.any(rows["w0"][ex] + rows["w1"][ex] > len(trace._explicit)):
        raise ValueError("a message's contributors are out of range")


def write_chrome(trace, dest, flows: bool = False):
    """
    Chrome trace-event JSON (Perfetto, chrome://tracing) to a path or text file object
    (gzipped when a path ends in .gz), written in blocks. One process per device with the
    tracks of CHROME_TRACKS; each message is a slice on the sender's "send port" track and
    one on the receiver's "recv port" track (category "comm", as a profiler files NCCL
    kernels), named after its chunk (flows=True joins them by an arrow: about 80 more bytes
    a message); each collective is a span on every taking-part device's "collective" track;
    each Compute record a slice on its device's "compute" track (category "compute", named
    "L<layer> <label>", shown above the ports as a profiler shows its streams). Times in µs;
    names and metadata once per track.
    """
    trace.flush()
    with _open_bytes(dest) as write:
        write(b'{"displayTimeUnit":"ns","otherData":{"schema":"%s","version":%d},"traceEvents":[\n'
              % (SCHEMA.encode(), SCHEMA_VERSION))
        first = True
        for block in _chrome_blocks(trace, flows):
            if len(block):
                if not first:
                    write(b",\n")
                write(block)
                first = False
        write(b"\n]}\n")

def _chrome_devices(trace) -> list[int]:
    r = trace.rows()
    devs = set(np.unique(np.concatenate([r["src"], r["dst"]])).tolist()) if trace._len else set()
    devs |= {d for c in trace.collectives for d in range(c.n)}
    devs |= {int(c.device) for c in trace.computes}
    return sorted(devs)

def _chrome_blocks(trace, flows: bool):
    """Blocks of comma-joined events: metadata, then each track's slices."""
    devices = _chrome_devices(trace)
    meta = []
    for d in devices:
        pid = _pid(d)
        name = "switch" if d == SWITCH else f"GPU {d}"
        meta.append(f'{{"ph":"M","name":"process_name","pid":{pid},"args":{{"name":"{name}"}}}}')
        meta.append(f'{{"ph":"M","name":"process_sort_index","pid":{pid},"args":{{"sort_index":{pid}}}}}')
        for tid, tname in CHROME_TRACKS:
            meta.append(f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":"{tname}"}}}}')
            order = -1 if tid == COMPUTE_TID else tid  # compute above the ports
            meta.append(f'{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},'
                        f'"args":{{"sort_index":{order}}}}}')
    yield ",\n".join(meta).encode()
    yield from _chrome_collectives(trace)
    yield from _chrome_messages(trace, flows)
    yield from _chrome_computes(trace)

def _chrome_collectives(trace):
    for c in trace.collectives:
        name = json.dumps(f"{c.op} ({c.algo}) {c.label}".strip())
        head = '{"ph":"X","cat":"collective","name":' + name + ',"pid":'
        tail = (f',"tid":0,"ts":{c.t_start * 1e6:.4f},"dur":{(c.t_end - c.t_start) * 1e6:.4f},'
                f'"args":{{"id":{c.id},"bytes":{_num(c.nbytes)},"n":{c.n}}}}}')
        yield ",\n".join(head + str(_pid(d)) + tail for d in range(c.n)).encode()

def _chrome_messages(trace, flows: bool, block: int = 16384):
    # Every field is formatted for a whole block at once (see _Rows); ts and dur to 0.1 ns
    # (a message lasts at least α, about a µs on every preset link).
    for lo in range(0, trace._len, block):
        r = trace.rows(lo, lo + block)
        src, dst = r["src"], r["dst"]
        ts = _fixed_field(r["t_start"] * 1e6)
        dur = _fixed_field((r["t_end"] - r["t_start"]) * 1e6)
        # the step from 1, as the app and the CSV count it (Message.step, the engine's, counts from 0)
        chunk, step, nb = _chunk_field(r["chunk"]), _int_field(r["step"] + 1), _fixed_field(r["nbytes"], 3)
        fs, fd = _int_field(src), _int_field(dst)
        switch = (src == SWITCH).any() or (dst == SWITCH).any()
        ps, pd = (_int_field(_pids(src)), _int_field(_pids(dst))) if switch else (fs, fd)
        yield _SEND.render([chunk, ps, ts, dur, fd, step, nb])
        yield _RECV.render([chunk, pd, ts, dur, fs, step, nb])
        if flows:
            ids = _int_field(np.arange(lo, lo + len(r)))
            yield _FLOW_S.render([ids, ps, ts])
            yield _FLOW_F.render([ids, pd, ts])

def _chrome_computes(trace, block: int = 4096):
    # a step has a few thousand ops (Llama-3 70B on 8 GPUs: 4,496; 13,456 with async):
    # formatted one by one, a block at a time
    for lo in range(0, len(trace.computes), block):
        out = []
        for c in trace.computes[lo:lo + block]:
            layer = int(getattr(c, "layer", -1))
            name = json.dumps(str(c.label) if layer < 0 else f"L{layer} {c.label}")
            bound = json.dumps(str(getattr(c, "bound", "")))
            out.append(f'{{"ph":"X","cat":"compute","name":{name},"pid":{_pid(int(c.device))},'
                       f'"tid":{COMPUTE_TID},"ts":{c.t_start * 1e6:.4f},"dur":{(c.t_end - c.t_start) * 1e6:.4f},'
                       f'"args":{{"flops":{_num(c.flops)},"bytes":{_num(c.nbytes)},"bound":{bound}}}}}')
        yield ",\n".join(out).encode()


CSV_STEP = "step (from 1)"  # write_csv's step column: the app's count, not Message.step's


def write_csv(trace, dest):
    """
    One row per message, columns Message._fields; every number is a plain number (seconds,
    bytes), reduce is 1 or 0, contributors are device ids and ranges joined with '+'
    ("0-3+8" is devices 0, 1, 2, 3 and 8). A path ending in .gz is gzipped.
    Steps are written from 1, as the app counts them ("step 3 of 7"), and the column says so:
    "step (from 1)" (Message.step, the engine's, counts from 0). Bytes that are a whole number
    are written as one (131072, not 131072.0); others exactly (repr of the float).
    """
    import csv  # here, not at the top: the app's start need not load it

    trace.flush()
    with _open_text(dest, newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_STEP if f == "step" else f for f in _FIELDS)
        names = {}
        for lo in range(0, trace._len, 16384):
            r = trace.rows(lo, lo + 16384)
            rows = []
            for coll, key, step, src, dst, chunk, nb, t0, t1, red, w0, w1, w2, w3 in zip(
                    *(r[name].tolist() for name in ROW.names)):
                op, algo, label, phase = trace._keys[key]
                desc = (w0, w1, w2, w3)
                who = names.get(desc)
                if who is None:
                    if len(names) > 65536:  # a ring has n² distinct arcs: keep the memo small
                        names.clear()
                    who = names[desc] = who_text(desc, trace._explicit)
                nb = int(nb) if float(nb).is_integer() else nb
                rows.append((coll, op, algo, label, step + 1, src, dst, chunk, who, nb, t0, t1, phase, int(red)))
            w.writerows(rows)


# Chrome tracks of every device's process: (tid, name)
CHROME_TRACKS = ((0, "collective"), (1, "send port"), (2, "recv port"), (3, "compute"))
COMPUTE_TID = 3


def _num(v) -> str:
    """A number as JSON: integers without a fraction, others to 12 significant digits."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.12g}"


@contextlib.contextmanager
def _open_text(dest, newline=None):
    """A text file to write: dest itself if it has .write, else the path (gzip for .gz)."""
    if hasattr(dest, "write"):
        yield dest
        return
    path = os.fspath(dest)
    if path.endswith(".gz"):
        import gzip

        # level 5: most of level 9's size at a third of its time on trace text
        with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline=newline) as f:
            yield f
    else:
        with open(path, "w", encoding="utf-8", newline=newline) as f:
            yield f


# ---------------------------------------------------------------------------------------
# Formatting a block of JSON events at once
# ---------------------------------------------------------------------------------------
# A Chrome trace of n = 256 has a quarter of a million slices; formatting them one by one in
# Python would cost several times the simulation. Instead every field of a block of messages
# becomes a (B, w) matrix of ASCII bytes, looked up in tables of ready-made digits, and the
# event template is filled column by column into one (B, W) byte matrix written as it is.
# A number shorter than its column is padded with spaces — whitespace between JSON tokens —
# on the left, or after its last digit; text inside a string (a chunk's name) is left-aligned
# and its closing quote moves with it, so no string ever holds padding.
@cache
def _tables():
    """Digit tables, built on first use (a few ms; importing the engine need not pay them):
    right[i + 1]  i (-1 … 9999) right-aligned in 4 bytes, as one uint32
    digits[i]     i (0 … 9999) as 4 zero-padded digits
    frac[d][i]    ".i" to d decimals without trailing zeros, blank-padded ("" for 0)
    quoted[i]     i followed by a closing quote, left-aligned in 5 bytes"""
    def table(texts, width, align):
        return np.frombuffer(b"".join(getattr(t, align)(width) for t in texts), np.uint8).reshape(-1, width)

    numbers = [str(i).encode() for i in range(10_000)]
    right = table([b"-1"] + numbers, 4, "rjust").copy().view(np.uint32).ravel()
    digits = table([t.rjust(4, b"0") for t in numbers], 4, "ljust")
    frac = {d: table([("." + str(i).rjust(d, "0")).rstrip("0").rstrip(".").encode() for i in range(10 ** d)],
                     d + 1, "ljust") for d in (3, 4)}
    quoted = table([t + b'"' for t in numbers], 5, "ljust")
    return right, digits, frac, quoted


_POW10 = 10 ** np.arange(19, dtype=np.int64)
_BLANK = 32


def _int_field(v) -> np.ndarray:
    """(B, w) uint8: integers v, right-aligned, spaces in front."""
    v = np.asarray(v, dtype=np.int64)
    if not len(v):
        return np.empty((0, 1), np.uint8)
    top, low = int(v.max()), int(v.min())
    if top == low:  # one value for the whole block (a ring's bytes): format it once
        text = str(top).encode()
        return np.broadcast_to(np.frombuffer(text, np.uint8), (len(v), len(text)))
    if top < 10_000 and low >= -1:
        w = max(len(str(top)), 2 if low < 0 else 1)
        return _tables()[0][v + 1].view(np.uint8).reshape(len(v), 4)[:, 4 - w:]
    a = np.abs(v)
    w = len(str(int(a.max())))
    parts, rest = [], a
    for _ in range((w + 3) // 4):
        rest, g = np.divmod(rest, 10_000)
        parts.append(_tables()[1][g])
    out = np.concatenate(parts[::-1], axis=1)[:, -w:]
    out[:, :w - 1][a[:, None] < _POW10[w - 1:0:-1]] = _BLANK  # leading zeros
    neg = v < 0
    if neg.any():  # a minus sign just before the first digit
        out = np.concatenate([np.full((len(v), 1), _BLANK, np.uint8), out], axis=1)
        digits = np.maximum(1, np.floor(np.log10(np.maximum(a, 1))).astype(np.int64) + 1)
        out[np.flatnonzero(neg), (w - digits)[neg]] = ord("-")
    return out


def _fixed_field(x, decimals: int = 4) -> np.ndarray:
    """(B, w) uint8: x (>= 0) to `decimals` decimals, trailing zeros (and a bare '.') blank."""
    i = np.rint(np.asarray(x, dtype=float) * 10 ** decimals).astype(np.int64)
    if len(i) and i.min() == i.max():  # one value for the whole block: format it once
        whole, frac = divmod(int(i[0]), 10 ** decimals)
        text = str(whole).encode() + _tables()[2][decimals][frac].tobytes().rstrip()
        return np.broadcast_to(np.frombuffer(text, np.uint8), (len(i), len(text)))
    whole, frac = np.divmod(i, 10 ** decimals)
    return np.concatenate([_int_field(whole), _tables()[2][decimals][frac]], axis=1)


def _chunk_field(chunk) -> np.ndarray:
    """Chunk numbers ("all" for ALL) left-aligned, each followed by the closing quote of the name."""
    chunk = np.asarray(chunk, dtype=np.int64)
    every = chunk == ALL
    c = np.where(every, 0, chunk)
    if len(c) and int(c.max()) >= 10_000:
        text = [(b"all" if e else str(v).encode()) + b'"' for v, e in zip(c.tolist(), every.tolist())]
        w = max(map(len, text))
        return np.array([list(t.ljust(w)) for t in text], dtype=np.uint8)
    w = max(len(str(int(c.max()))) + 1 if len(c) else 2, 4 if every.any() else 0)
    out = np.full((len(c), w), _BLANK, np.uint8)
    out[:, :min(w, 5)] = _tables()[3][c][:, :w]
    if every.any():
        out[every, :4] = np.frombuffer(b'all"', np.uint8)
    return out


def _pids(devices) -> np.ndarray:
    return np.where(devices == SWITCH, _pid(SWITCH), devices)


class _Rows:
    """A JSON event template with fields (None in `parts`) filled from (B, w) byte matrices."""

    def __init__(self, *parts):
        self.parts = [None if p is None else np.frombuffer(p.encode("ascii"), np.uint8) for p in parts]
        self._buffers: dict = {}  # (B, field widths) -> a matrix with the constant parts already in place

    def render(self, fields) -> memoryview:
        """The B events as bytes, joined by ",\\n" (valid until the next render)."""
        B = len(fields[0])
        if not B:
            return memoryview(b"")
        key = (B, tuple(f.shape[1] for f in fields))
        m = self._buffers.get(key)
        fresh = m is None
        if fresh:
            if len(self._buffers) > 8:
                self._buffers.clear()
            m = self._buffers[key] = np.empty((B, sum(key[1]) + sum(len(p) for p in self.parts if p is not None) + 2),
                                              np.uint8)
            m[:, -2], m[:, -1] = ord(","), ord("\n")
        it = iter(fields)
        pos = 0
        for p in self.parts:
            if p is None:
                f = next(it)
                m[:, pos:pos + f.shape[1]] = f
                pos += f.shape[1]
            else:
                if fresh:  # the template's own text is written once per buffer
                    m[:, pos:pos + len(p)] = p
                pos += len(p)
        return memoryview(m.reshape(-1)[:-2])


# One message is two slices (category "comm"): on the sender's send track (tid 1) and the
# receiver's recv track (tid 2); args: the peer (-1: the switch), the step (from 1) and the bytes. A flow
# arrow joins them.
_SEND = _Rows('{"ph":"X","cat":"comm","name":"chunk ', None, ',"pid":', None, ',"tid":1,"ts":', None, ',"dur":',
              None, ',"args":{"to":', None, ',"step":', None, ',"bytes":', None, '}}')
_RECV = _Rows('{"ph":"X","cat":"comm","name":"chunk ', None, ',"pid":', None, ',"tid":2,"ts":', None, ',"dur":',
              None, ',"args":{"from":', None, ',"step":', None, ',"bytes":', None, '}}')
_FLOW_S = _Rows('{"ph":"s","cat":"m","name":"m","id":', None, ',"pid":', None, ',"tid":1,"ts":', None, '}')
_FLOW_F = _Rows('{"ph":"f","bp":"e","cat":"m","name":"m","id":', None, ',"pid":', None, ',"tid":2,"ts":', None, '}')


@contextlib.contextmanager
def _open_bytes(dest):
    """write(bytes) into dest: a path (gzip for .gz), a binary file, or a text file (decoded)."""
    if hasattr(dest, "write"):
        if isinstance(dest, io.TextIOBase):
            yield lambda b: dest.write(bytes(b).decode("utf-8"))
        else:
            yield dest.write
        return
    path = os.fspath(dest)
    if path.endswith(".gz"):
        import gzip

        f = gzip.open(path, "wb", compresslevel=5)
    else:
        f = open(path, "wb")  # closed by the with below
    with f:
        yield f.write


def _pid(d: int) -> int:
    return 10_000 if d == SWITCH else d


def _msg_from_list(row) -> tuple:
    """A version-1 message row -> the arguments of Trace.add_message."""
    if not isinstance(row, list) or len(row) != len(_FIELDS):
        raise ValueError(f"message row has {len(row) if isinstance(row, list) else '?'} fields")
    row = list(row)
    row[8] = frozenset(int(d) for d in row[8])
    for i in (0, 4, 5, 6, 7):
        row[i] = int(row[i])
    for i in (9, 10, 11):
        row[i] = float(row[i])
    for i in (1, 2, 3, 12):
        row[i] = str(row[i])
    row[13] = bool(row[13])
    return tuple(row)


def _compute_to_list(c) -> list:
    return [int(c.device), str(c.label), float(c.flops), float(c.nbytes), float(c.t_start), float(c.t_end),
            int(getattr(c, "layer", -1)), str(getattr(c, "kind", "")), str(getattr(c, "bound", ""))]


def _compute_from_list(row) -> Compute:
    if not isinstance(row, list) or len(row) != len(Compute._fields):
        raise ValueError(f"compute row has {len(row) if isinstance(row, list) else '?'} fields")
    d, label, flops, nbytes, t0, t1, layer, kind, bound = row
    return Compute(int(d), str(label), float(flops), float(nbytes), float(t0), float(t1), int(layer), str(kind),
                   str(bound))


def _coll_to_dict(c: Collective) -> dict:
    d = c._asdict()
    for k in ("id", "n", "n_chunks", "n_steps", "first_msg", "last_msg"):
        d[k] = int(d[k])
    for k in ("t_start", "t_end", "nbytes"):
        d[k] = float(d[k])
    if c.plan is None:
        del d["plan"]
    else:
        d["plan"] = c.plan.to_json()
    if isinstance(c.initial, Initial):
        d["initial"] = c.initial.to_json()
    else:
        d["initial"] = [[[ch, sorted(who)] for ch, who in sorted(h)] for h in c.initial]
    return d


def _coll_from_dict(d: dict) -> Collective:
    d = dict(d)
    if d.get("plan") is not None:
        from .plan import PlanRecord
        d["plan"] = PlanRecord.from_json(d["plan"])
    init = d["initial"]
    if isinstance(init, dict):
        d["initial"] = (Initial.own_one(init["own_one"]) if "own_one" in init
                        else Initial.own_all(int(init["n"]), int(init["own_all"])))
    else:
        d["initial"] = tuple(tuple((int(ch), frozenset(int(w) for w in who)) for ch, who in h) for h in init)
    for k in ("id", "n", "n_chunks", "n_steps", "first_msg", "last_msg"):
        d[k] = int(d[k])
    for k in ("t_start", "t_end", "nbytes"):
        d[k] = float(d[k])
    return Collective(**d)
