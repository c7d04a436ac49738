"""
The batch machinery of topo_collectives._Run on its own (no Qt): the fast paths taken for the
torus agree with the plain definitions they replace.
"""

import numpy as np
import pytest

from simcore.comm_sim import Comm
from simcore.topo_collectives import _occurrence, _Run
from simcore.topology import torus


@pytest.mark.parametrize("most", [1, 2, 3])
def test_occurrence_counts_earlier_equal_keys(most):
    rng = np.random.default_rng(most)
    keys = np.repeat(rng.permutation(50), rng.integers(1, most + 1, 50))
    keys = keys[rng.permutation(len(keys))]
    seen, want = {}, []
    for k in keys.tolist():
        want.append(seen.get(k, 0))
        seen[k] = want[-1] + 1
    got = _occurrence(keys)
    assert (got is None) == (max(want) == 0)
    if got is not None:
        assert got.tolist() == want


def _run(n):
    comm = Comm(torus((n,)))
    return _Run(comm, np.zeros((n, n)), n)


# a move's worth of pairs (sorted), and many: few distinct (a table of pairs) or many (sorted)
@pytest.mark.parametrize("size, spread", [(400, 60), (3000, 4), (3000, 60)])
def test_unite_interns_sets_in_sorted_pair_order(size, spread):
    """_unite's ids: the union's devices, a new set numbered in the order of its first (a, b)."""
    n = 64
    run, rng = _run(n), np.random.default_rng(spread)
    sets = {d: frozenset((d,)) for d in range(n)}  # the reference: id → devices
    ids = {v: k for k, v in sets.items()}
    for _ in range(4):
        a = rng.integers(0, len(sets), size) % spread
        b = rng.integers(0, len(sets), size)
        for x, y in sorted(set(zip(a.tolist(), b.tolist()))):
            u = sets[x] | sets[y]
            if u not in ids:
                ids[u] = len(sets)
                sets[ids[u]] = u
        want = [ids[sets[x] | sets[y]] for x, y in zip(a.tolist(), b.tolist())]
        assert run._unite(a, b).tolist() == want
    assert run.n_sets == len(sets)
    for i, devs in sets.items():  # each id's bitmask row holds exactly its devices
        row = np.unpackbits(run.masks[i].view(np.uint8), bitorder="little")[:n]
        assert set(np.flatnonzero(row).tolist()) == set(devs)
