"""
collectives — the collective algorithms themselves: ring and one-shot building blocks, and the
all-gather, reduce-scatter and all-reduce functions that move real numpy arrays through a
simcore.comm_sim.Comm and record every message in its trace. The registry of these functions
(simcore.algorithms) and the public names (simcore.comm_sim) import them from here.

Every collective returns real arrays and appends to `comm.trace` (see simcore.trace).
Sizes: S is always the *full* array's bytes (after byte_scale), as nccl-tests reports it:
the all-reduce input, the all-gather output, the reduce-scatter input.
"""

from __future__ import annotations

import numpy as np

from .contributors import who_block, who_everyone
from .trace import ALL, SWITCH, Initial, chunk_bounds


# ---------------------------------------------------------------------------------------
# Ring building blocks (one place decides which chunk a device sends at each ring step)
# ---------------------------------------------------------------------------------------
# All n sends of a ring step are timed at once (d -> d+1 holds distinct ports), a phase of
# n−1 steps is recorded in one call, and the data moves as whole-array operations, so a step
# costs a few numpy operations however large n is. ring_rs_chunk / ring_ag_chunk work on
# arrays as on numbers.
def ring_rs_chunk(d, k, n):
    """Reduce-scatter, step k: device d sends (its partial of) chunk (d - k) mod n to d + 1."""
    return (d - k) % n


def ring_ag_chunk(d, k, n, first):
    """All-gather, step k: device d forwards the chunk its ring predecessor owned k steps back."""
    return first[(d - k) % n]


def _bounds(length, n):
    """Start offsets of n nearly equal chunks (np.array_split's rule), plus the end."""
    return np.asarray(chunk_bounds(length, n), dtype=np.int64)


def _move(bufs, bounds, src, dst, chunks, add):
    """
    Row dst[i] of bufs gets chunk chunks[i] of row src[i] (added when `add`). No (dst, chunk)
    repeats and no step reads what it writes, so this equals doing the messages one by one.
    """
    lo = bounds[chunks]
    lens = bounds[chunks + 1] - lo
    if len(lens) and (lens == lens[0]).all():  # equal chunks: one 2-D fancy index per side
        cols = lo[:, None] + np.arange(lens[0])
        rs, rd = src[:, None], dst[:, None]
    else:
        cols = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        rs, rd = np.repeat(src, lens), np.repeat(dst, lens)
    if add:
        bufs[rd, cols] += bufs[rs, cols]
    else:
        bufs[rd, cols] = bufs[rs, cols]


def _ring_reduce_scatter(comm, bufs, bounds, ready, step0=0, phase="reduce-scatter"):
    """
    n−1 steps on the rows of `bufs` (n, L) in place. ready[d]: when device d's partials exist
    (all of them); or ready[d, c]: when its partial of chunk c exists (a matmul computed chunk
    by chunk, the collective matmul). At step k device d sends chunk (d−k) mod n, the sum of
    devices d−k … d (a ring arc), to d+1, which adds it: it starts once its own partial of that
    chunk exists, what it forwards has arrived and both ports are free. Afterwards device d
    holds chunk (d+1) mod n complete. Returns when that chunk is complete on every device
    (seconds, per device).
    """
    n = comm.n
    d, steps = np.arange(n), np.arange(n - 1)
    plan = comm._plan(d, (d + 1) % n)  # the same ports every step
    chunk = ring_rs_chunk(d[None, :], steps[:, None], n)  # [step, device]
    ready = np.asarray(ready, dtype=float)
    per_chunk = ready.ndim == 2
    b = (bounds[chunk + 1] - bounds[chunk]) * bufs.itemsize * comm.byte_scale
    start, end = np.empty(b.shape), np.empty(b.shape)
    prev = (d - 1) % n
    got = np.full(n, -np.inf)  # when device d received its last chunk
    for k in steps:  # a step needs the chunk received in the step before
        own = ready[d, chunk[k]] if per_chunk else ready
        start[k], end[k] = comm._port_times(plan, b[k], np.maximum(own, got))
        got = end[k][prev]
    comm._record(step0 + steps[:, None], d, (d + 1) % n, chunk, b, start, end,
                 (chunk, steps[:, None] + 1, n, n), phase, True)
    _ring_sums(bufs, bounds, n)  # the bytes really move, and are added
    return np.maximum(ready[d, (d + 1) % n] if per_chunk else ready, got)


def _ring_sums(bufs, bounds, n):
    """
    What the n−1 reduce-scatter steps leave in `bufs`, in place: chunk c travels c, c+1, …,
    and device c+i adds its own partial to what arrived, so it holds the sum over devices
    c … c+i, accumulated in that order (np.add.accumulate adds one term at a time, exactly as
    the messages do).
    """
    lens = np.diff(bounds)
    if not len(lens) or not (lens == lens[0]).all():  # uneven chunks: step by step
        d = np.arange(n)
        for k in range(n - 1):
            c = ring_rs_chunk(d, k, n)
            _move(bufs, bounds, d, (d + 1) % n, c, add=True)
        return
    q = int(lens[0])
    # Chunk c's path visits devices c, c+1, …: in two stacked copies of the buffers it is the
    # skewed diagonal [c + i, c], a strided view, so the sums need no gather and no scatter.
    two = np.concatenate([bufs, bufs]).reshape(2 * n, n, q)  # [device (twice), chunk, element]
    rs, cs, es = two.strides
    path = np.lib.stride_tricks.as_strided(two, shape=(n, n, q), strides=(rs + cs, rs, es))  # [chunk, hop]
    np.add.accumulate(path, axis=1, out=path)
    # device d is hop d − c of chunk c's path: for chunks c <= d row d of the first copy, for
    # c > d (the path wrapped past n−1) row d + n; each is one contiguous run of the row
    rows = two.reshape(2 * n, n * q)
    for d in range(n):
        bufs[d, :(d + 1) * q] = rows[d, :(d + 1) * q]
        bufs[d, (d + 1) * q:] = rows[d + n, (d + 1) * q:]


def _ring_all_gather(comm, bufs, bounds, have, first, who, step0=0, phase="all-gather"):
    """
    n−1 steps on `bufs` (n, L) in place: device d starts with chunk first[d] complete from
    time have[d], its contributors the descriptor who (arrays over d, or one set), and ends with every
    chunk. At step k device d forwards the chunk its predecessor d−k started with.
    """
    n = comm.n
    d, steps = np.arange(n), np.arange(n - 1)
    plan = comm._plan(d, (d + 1) % n)
    origin = (d[None, :] - steps[:, None]) % n  # [step, device]: whose chunk d forwards
    chunk = ring_ag_chunk(d[None, :], steps[:, None], n, first)
    b = (bounds[chunk + 1] - bounds[chunk]) * bufs.itemsize * comm.byte_scale
    start, end = np.empty(b.shape), np.empty(b.shape)
    prev = (d - 1) % n
    ready = np.asarray(have, dtype=float)
    for k in steps:  # the next step forwards what just landed
        start[k], end[k] = comm._port_times(plan, b[k], ready)
        ready = end[k][prev]
    comm._record(step0 + steps[:, None], d, (d + 1) % n, chunk, b, start, end,
                 tuple(w[origin] if np.ndim(w) else w for w in who), phase, False)
    # the bytes really move: in the end every device has every chunk of the device it started on
    row_of_chunk = np.empty(n, dtype=np.int64)
    row_of_chunk[first] = d
    cols = np.arange(bufs.shape[1])
    bufs[:] = bufs[np.repeat(row_of_chunk, np.diff(bounds)), cols]


def _each_alone(n):
    """Device d's own data, for every d: the descriptors of {0}, {1}, …, {n−1}."""
    return (np.arange(n), np.ones(n, dtype=np.int64), np.full(n, n), np.full(n, n))


# ---------------------------------------------------------------------------------------
# One-shot building blocks: every message of a phase is issued at once, each to its final
# receiver, so the phase pays α once and its ports stream the bytes back to back.
# ---------------------------------------------------------------------------------------
def _direct_reduce_scatter(comm, bufs, bounds, ready, step0=0, phase="one-shot reduce-scatter"):
    """
    One-shot reduce-scatter on `bufs` (n, L) in place: device c owns chunk c. In round j
    (1 .. n−1) device d sends its partial of chunk (d + j) mod n straight to that chunk's owner,
    so in every round each receive port hears from one sender. Returns when every owner's sum
    is complete (seconds, per device); its contributors are then everyone.
    """
    n = comm.n
    d = np.arange(n)
    ready = np.asarray(ready, dtype=float)
    done = ready.copy()
    for j in range(1, n):
        c = (d + j) % n
        nbytes = (bounds[c + 1] - bounds[c]) * bufs.itemsize
        t = comm.send_batch(d, c, nbytes, ready, step0 + j - 1, c, (d, 1, n, n), phase, True)
        _move(bufs, bounds, d, c, c, add=True)  # d never sends its own chunk d: an untouched partial
        done[c] = np.maximum(done[c], t)
    return done


def _direct_all_gather(comm, bufs, bounds, ready, first, who, step0=0, phase="one-shot all-gather"):
    """
    One-shot all-gather on `bufs` (n, L) in place: device d holds chunk first[d] complete (its
    contributors the descriptor who[d]) from time ready[d] and sends it straight to every
    other device, to (d + j) mod n in round j (1 .. n−1).
    """
    n = comm.n
    d = np.arange(n)
    c = np.asarray(first)
    nbytes = (bounds[c + 1] - bounds[c]) * bufs.itemsize
    for j in range(1, n):
        dst = (d + j) % n
        comm.send_batch(d, dst, nbytes, ready, step0 + j - 1, c, who, phase, False)
        _move(bufs, bounds, d, dst, c, add=False)


def _ring_ready(comm, chunk_ready):
    """
    When each device's partials exist, for _ring_reduce_scatter: comm.ready per device, or
    chunk_ready[d][c] per device and chunk when given. The collective then starts with the
    first chunk (its min is _begin's t0): the chunks computed first go out while the last are
    still being computed.
    """
    n = comm.n
    if chunk_ready is None:
        return np.array(comm.ready)
    try:
        ready = np.array(chunk_ready, dtype=float)
    except (TypeError, ValueError):
        ready = None
    if ready is None or ready.shape != (n, n):
        raise ValueError(f"chunk_ready must give {n} times for each of the {n} devices")
    if not np.isfinite(ready).all():
        raise ValueError("chunk_ready must hold finite times (seconds)")
    return ready


def check_arrays(arrays, n, what):
    if len(arrays) != n:
        raise ValueError(f"{what}: got {len(arrays)} arrays for {n} devices")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{what}: every device must hold the same shape, got {sorted(shapes)}")
    a0 = np.asarray(arrays[0])
    if a0.ndim != 1:
        raise ValueError(f"{what}: expects 1-D arrays, got shape {a0.shape}")


def stack(arrays):
    dtype = np.result_type(*arrays)
    return np.array(arrays, dtype=dtype)  # (n, L), a private copy: inputs are never modified


def _gather_inputs(comm, chunks, owner, what):
    """(bufs, bounds, first) for an all-gather: chunk first[d] of bufs[d] holds chunks[d]."""
    n = comm.n
    if len(chunks) != n:
        raise ValueError(f"{what}: got {len(chunks)} chunks for {n} devices")
    first = [int(owner[d]) for d in range(n)]
    if sorted(first) != list(range(n)):
        raise ValueError(f"{what}: owner must give every chunk index 0..{n - 1} once, got {first}")
    lengths = [0] * n
    for d in range(n):
        lengths[first[d]] = len(chunks[d])
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    bufs = np.zeros((n, int(bounds[-1])), dtype=np.result_type(*chunks))
    for d in range(n):
        bufs[d, bounds[first[d]]:bounds[first[d] + 1]] = chunks[d]
    return bufs, bounds, first


def _scatter_inputs(comm, arrays, what):
    """(bufs, bounds) for a reduce-scatter: 1-D arrays whose length n divides."""
    n = comm.n
    check_arrays(arrays, n, what)
    L = len(arrays[0])
    if L % n:
        raise ValueError(f"{what}: length {L} is not divisible by {n} devices")
    return stack(arrays), _bounds(L, n)


# ---------------------------------------------------------------------------------------
# All-gather and reduce-scatter
# ---------------------------------------------------------------------------------------
def allgather_ring(comm, chunks, owner, label=""):
    """
    Ring all-gather. chunks[d]: device d's 1-D chunk; owner[d]: the chunk index it holds (a
    permutation of 0..n-1). Returns, for every device, all chunks concatenated in chunk-index
    order (1-D, length = sum of chunk lengths).

    n−1 steps; at step k every device forwards to (d+1) mod n the chunk it received at step
    k−1 (its own at step 0). Each step waits for the previous step's chunk, so every step pays
    α: time (n−1)·(α + S/(n·β)), chunks of S/n bytes (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    bufs, bounds, first = _gather_inputs(comm, chunks, owner, "all-gather")
    comm._begin("all-gather", "ring", label, n, bufs[0].nbytes, Initial.own_one(first))
    _ring_all_gather(comm, bufs, bounds, np.array(comm.ready), np.asarray(first), _each_alone(n), phase="all-gather")
    comm._end()
    return [bufs[d] for d in range(n)]


def allgather_direct(comm, chunks, owner, label=""):
    """
    One-shot all-gather (same arguments and result as allgather_ring). Every device sends its
    chunk straight to every other device, to (d + j) mod n in round j: n−1 messages of S/n
    queue on each send port, all issued at once. Time: α + (n−1)·S/(n·β).
    """
    n = comm.n
    bufs, bounds, first = _gather_inputs(comm, chunks, owner, "all-gather")
    comm._begin("all-gather", "direct", label, n, bufs[0].nbytes, Initial.own_one(first))
    _direct_all_gather(comm, bufs, bounds, np.array(comm.ready), first, _each_alone(n))
    comm._end()
    return [bufs[d] for d in range(n)]


def reduce_scatter_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring reduce-scatter. arrays[d]: device d's 1-D partial array, length divisible by n.
    Returns (pieces, owner): after n−1 steps device r holds pieces[r], the full sum of chunk
    owner[r] = (r+1) mod n (length L/n).
    chunk_ready[d][c] (optional, seconds): when device d's partial of chunk c exists (a matmul
    computed chunk by chunk, the collective matmul); it replaces comm.ready for this call.

    At step k device d adds what it received to its own partial and passes chunk (d−k) mod n on.
    Time: (n−1)·(α + S/(n·β)), S = bytes of one input array (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    bufs, bounds = _scatter_inputs(comm, arrays, "reduce-scatter")
    ready = _ring_ready(comm, chunk_ready)
    comm._begin("reduce-scatter", "ring", label, n, bufs[0].nbytes, Initial.own_all(n, n),
                t0=None if chunk_ready is None else ready.min())
    _ring_reduce_scatter(comm, bufs, bounds, ready)
    comm._end()
    owner = {r: (r + 1) % n for r in range(n)}
    pieces = [bufs[r, bounds[owner[r]]:bounds[owner[r] + 1]].copy() for r in range(n)]
    return pieces, owner


def reduce_scatter_direct(comm, arrays, label=""):
    """
    One-shot reduce-scatter (same arguments as reduce_scatter_ring). Device r owns chunk r;
    every device sends its partial of chunk c straight to device c, all at once, and the
    owner adds the n−1 partials as they land. Returns (pieces, owner) with owner[r] = r.
    Time: α + (n−1)·S/(n·β).
    """
    n = comm.n
    bufs, bounds = _scatter_inputs(comm, arrays, "reduce-scatter")
    comm._begin("reduce-scatter", "direct", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    _direct_reduce_scatter(comm, bufs, bounds, np.array(comm.ready))
    comm._end()
    owner = {r: r for r in range(n)}
    return [bufs[r, bounds[r]:bounds[r + 1]].copy() for r in range(n)], owner


# ---------------------------------------------------------------------------------------
# All-reduce algorithms: fn(comm, arrays, label="") -> list of summed arrays (1-D)
# ---------------------------------------------------------------------------------------
def allreduce_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring all-reduce = ring reduce-scatter, then ring all-gather of the reduced chunks.
    2(n−1) steps; each step every device sends one chunk of ≈S/n bytes to (d+1) mod n and the
    next step needs the chunk just received. Time: 2(n−1)·(α + S/(n·β)) (Thakur, Rabenseifner
    & Gropp 2005; NCCL's ring). Bandwidth-optimal; its latency grows linearly in n.
    Any length works: chunks follow np.array_split (the formula is exact when n divides it).
    chunk_ready[d][c] (optional): when device d's partial of chunk c exists, as in
    reduce_scatter_ring.
    """
    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    bufs = stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    ready = _ring_ready(comm, chunk_ready)
    comm._begin("all-reduce", "ring", label, n, bufs[0].nbytes, Initial.own_all(n, n),
                t0=None if chunk_ready is None else ready.min())
    if n > 1:
        have = _ring_reduce_scatter(comm, bufs, bounds, ready)
        first = (np.arange(n) + 1) % n  # device d now holds chunk d+1 complete
        _ring_all_gather(comm, bufs, bounds, have, first, who_everyone(n), step0=n - 1)
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_rd(comm, arrays, label=""):
    """
    Recursive doubling. In round k every device swaps its whole buffer with partner d XOR 2^k
    and adds: after log2(n) rounds everyone has the sum. Every round needs the last one's sum,
    and a round is a blocking exchange (MPI_Sendrecv with the rendezvous protocol of large
    messages): d sends once both d and its partner have finished the previous round.
    Time (n a power of two): log2(n)·(α + S/β) — few steps, but every step moves all S bytes.
    n not a power of two (p = largest power of two below n, r = n − p): first the r extra
    devices fold their buffer into device d − p, the p devices run recursive doubling, then
    the result is sent back: (log2(p) + 2)·(α + S/β) (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    bufs = stack(arrays)
    comm._begin("all-reduce", "rd", label, 1, bufs[0].nbytes, Initial.own_all(n, 1))
    nb = bufs[0].nbytes
    p = 1 << (n.bit_length() - 1)
    ready = np.array(comm.ready)
    extra = np.arange(p, n)
    step = 0
    if p < n:  # fold the extras in
        t = comm.send_batch(extra, extra - p, nb, ready[extra], step, ALL, (extra, 1, n, n), "fold", True)
        bufs[extra - p] += bufs[extra]
        ready[extra - p] = np.maximum(ready[extra - p], t)
        step += 1
    d = np.arange(p)
    k = 1
    while k < p:
        partner = d ^ k
        snap = bufs[:p].copy()  # every device sends its pre-round buffer
        both = np.maximum(ready[d], ready[partner])  # a blocking exchange: both partners are in this round
        # d's sum so far: the aligned block of k devices around d, each with its folded extra
        t = comm.send_batch(d, partner, nb, both, step, ALL, who_block(d & ~(k - 1), k, p, n), f"round {step}", True)
        bufs[:p] += snap[partner]
        ready[:p] = np.maximum(ready[:p], t[partner])  # device e heard from e XOR k
        k <<= 1
        step += 1
    if p < n:  # send the result back to the extras
        comm.send_batch(extra - p, extra, nb, ready[extra - p], step, ALL, who_everyone(n), "unfold", False)
        bufs[extra] = bufs[extra - p]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_innet(comm, arrays, label=""):
    """
    In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP). The buffer is cut into n
    chunks that stream through the switch: every device sends chunk c up, the switch adds the
    n copies and multicasts the sum down to every device. Up-traffic uses only send ports,
    down-traffic only receive ports, so chunk c goes up while chunk c−1 comes down.
    Each port carries ≈S bytes (the ring's 2(n−1)/n·S) and α is paid once up, once down: the
    last chunk is up after α + S/β and down one chunk later,
    time 2α + (n+1)·S/(n·β) (NCCL's NVLS algorithm, NCCL 2.17+ docs).
    """
    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    bufs = stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "innet", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    if n > 1:
        d, ready = np.arange(n), np.array(comm.ready)
        switch_ = np.full(n, SWITCH)
        total = bufs.sum(axis=0)  # what the switch's adders produce
        for c in range(n):
            lo, hi = bounds[c], bounds[c + 1]
            nbytes = (hi - lo) * bufs.itemsize
            up = comm.send_batch(d, switch_, nbytes, ready, c, c, (d, 1, n, n), "up", True)
            comm.send_batch(switch_, d, nbytes, up.max(), c + 1, c, who_everyone(n), "down", False)
            bufs[:, lo:hi] = total[lo:hi]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_direct(comm, arrays, label=""):
    """
    One-shot (direct): every device sends its whole buffer to every other device and adds
    what it receives. In round j device d sends to (d + j) mod n, so no receive port is
    shared within a round. All n−1 copies are issued at once: they queue on the send port and
    the last lands α after the port has streamed (n−1)·S bytes.
    Time: α + (n−1)·S/β — latency paid once, which is why inference engines use it for the
    small all-reduces of decode (TensorRT-LLM's and vLLM's custom all-reduce, "one-shot");
    its bytes, n/2 times the ring's, make it lose for large S.
    """
    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    src = stack(arrays)
    bufs = src.copy()
    nb = src[0].nbytes
    comm._begin("all-reduce", "direct", label, 1, nb, Initial.own_all(n, 1))
    d, ready = np.arange(n), np.array(comm.ready)
    for j in range(1, n):
        dst = (d + j) % n
        comm.send_batch(d, dst, nb, ready, j - 1, ALL, (d, 1, n, n), f"round {j}", True)
        bufs[dst] += src[d]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_two_shot(comm, arrays, label=""):
    """
    Two-shot: a one-shot reduce-scatter (device d sends chunk c of ≈S/n bytes straight to its
    owner, device c, which adds the n−1 partials), then a one-shot all-gather (each owner sends
    its summed chunk straight to every other device). Two phases, α paid once in each; each
    port carries 2(n−1)/n·S bytes, like the ring. Time: 2α + 2(n−1)·S/(n·β)
    (TensorRT-LLM's and vLLM's custom all-reduce, "two-shot"). Steps: n−1 rounds of each phase.
    """
    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    bufs = stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "two-shot", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    if n > 1:
        done = _direct_reduce_scatter(comm, bufs, bounds, np.array(comm.ready))
        _direct_all_gather(comm, bufs, bounds, done, np.arange(n), who_everyone(n), step0=n - 1)
    comm._end()
    return [bufs[d] for d in range(n)]
