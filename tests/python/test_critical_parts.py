"""The critical path's walk in parts (properties/rootcause/critical_parts.py):
every part contracts its own locations' share of the path's graph to where it
leaves the part, part 0 walks only those crossings, and every part walks its
own locations from the entries reached.  On random graphs (chains of wait
states between locations, OpenMP points with several successors, circles, as
clocks that disagree make them), split into parts in every way, the union of
the parts' stretches is the single walk's (the C core's earl_rc_critical_walk
of the whole graph).  The reports in parts are compared with the single
process's in test_parts.py; this test reaches the shapes the generated traces
do not (branching points whose successors lie in several parts, circles across
parts)."""
import types

import numpy as np
import pytest

from earlc.properties.rootcause import critical_parts as cp
from earlc.properties.rootcause.critical_path import Walk, _stretches
from earlc.properties.rootcause.records import PathGraph

SHIFT = 40


class FakePart:
    """A part of a trace whose event ids are the whole trace's: an event key is
    location << 40 | id."""

    def __init__(self, location):
        self.trace = types.SimpleNamespace(events=types.SimpleNamespace(location=location))

    def event_keys(self, ids):
        ids = np.asarray(ids, dtype=np.int64)
        return (self.trace.events.location[ids].astype(np.int64) << SHIFT) | ids

    def ids_of_keys(self, keys):
        return np.asarray(keys, dtype=np.int64) & ((1 << SHIFT) - 1)


def random_graph(seed, n_loc=6, n_events=400, waits=250, omp=40):
    """(location per event, wait keys sorted, partners, OpenMP keys sorted, CSR
    successors): partners mostly before the waiting event, some after it."""
    rng = np.random.default_rng(seed)
    location = rng.integers(0, n_loc, n_events).astype(np.int32)
    stride = n_events + 1
    w_ev = rng.choice(n_events, size=waits, replace=False)
    w_to = np.where(rng.random(waits) < 0.9, np.maximum(w_ev - rng.integers(1, 40, waits), 0),
                    rng.integers(0, n_events, waits)).astype(np.int64)
    w_key = location[w_ev].astype(np.int64) * stride + w_ev
    o = np.argsort(w_key)
    w_key, w_to = w_key[o], w_to[o]
    o_ev = rng.choice(n_events, size=omp, replace=False)
    o_key = np.sort(location[o_ev].astype(np.int64) * stride + o_ev)
    count = rng.choice(4, size=omp, p=[0.05, 0.45, 0.25, 0.25])  # none, one or several
    offset = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
    nxt = rng.integers(0, n_events, offset[-1]).astype(np.int64)
    return location, w_key, w_to, o_key, offset, nxt


def single_walk(g, walk):
    location, w_key, w_to, o_key, offset, nxt = g
    graph = PathGraph(stride=len(location) + 1, location=location,
                      ends_at_start=walk.ends_at_start, init_event=walk.init_of, wait_key=w_key,
                      wait_partner=w_to, omp_key=o_key, omp_next_offset=offset,
                      omp_next_event=nxt)
    return set(zip(*(a.tolist() for a in _stretches(graph, walk))))


def walk_in_parts(g, walk, part_of):
    """The three steps of walks_in_parts, the exchanges made by hand."""
    location, w_key, w_to, o_key, offset, nxt = g
    n_loc, stride = len(part_of), len(location) + 1
    size = int(part_of.max()) + 1
    ctx = types.SimpleNamespace(n_events=len(location), n_locations=n_loc,
                                events=types.SimpleNamespace(location=location))
    every_parts, shares = [], []
    for p in range(size):
        parts = types.SimpleNamespace(own=part_of == p, part_of=part_of,
                                      part=FakePart(location), rank=p, size=size)
        mine = parts.own[w_key // stride]
        o_mine = np.nonzero(parts.own[o_key // stride])[0]
        lo, n = offset[o_mine], np.diff(offset)[o_mine]
        shares.append(cp._Share(ctx, parts, w_key[mine], w_to[mine], o_key[o_mine],
                                np.concatenate(([0], np.cumsum(n))).astype(np.int64),
                                nxt[cp._ranges(lo, n)]))
        every_parts.append(parts)
    exits = np.unique(np.concatenate([s.exits() for s in shares]))
    sent = []
    for p, (parts, share) in enumerate(zip(every_parts, shares)):
        entries = exits[part_of[location[exits]] == p]
        if walk.event >= 0 and parts.own[location[walk.event]]:
            entries = np.union1d(entries, [walk.event]).astype(np.int64)
        sent.append(cp._contracted(parts, share, entries, walk))
    keys = cp._reached_keys(every_parts[0], walk, sent)
    found = set()
    for p, (parts, share) in enumerate(zip(every_parts, shares)):
        mine = keys[part_of[keys >> SHIFT] == p]
        s = share.walk(walk, parts.part.ids_of_keys(mine),
                       walk.event < 0 and bool(parts.own[walk.location]))
        got = list(zip(*(a.tolist() for a in s)))
        assert len(got) == len(set(got)), "a stretch walked twice"
        assert not found & set(got)
        found |= set(got)
    return found


@pytest.mark.parametrize("seed", range(12))
def test_the_walk_in_parts_is_the_single_walk(seed):
    g = random_graph(seed)
    location = g[0]
    n_loc = int(location.max()) + 1
    rng = np.random.default_rng(100 + seed)
    init_of = np.where(rng.random(n_loc) < 0.5,
                       np.asarray([np.nonzero(location == l)[0][0] for l in range(n_loc)]), -1)
    none = np.empty(0, np.int64)
    walks = [Walk(int(rng.integers(n_loc)), -1, True, init_of.astype(np.int64), none, none),
             Walk(int(location[len(location) - 1]), len(location) - 1, False,
                  init_of.astype(np.int64), none, none)]
    splits = [np.zeros(n_loc, np.int64), np.arange(n_loc) % 2, np.arange(n_loc) % 3,
              np.arange(n_loc), rng.integers(0, 3, n_loc)]
    lengths = []
    for walk in walks:
        want = single_walk(g, walk)
        lengths.append(len(want))
        for part_of in splits:
            part_of = np.asarray(part_of, dtype=np.int64)
            if part_of.max() + 1 != len(np.unique(part_of)):
                continue
            assert walk_in_parts(g, walk, part_of) == want, (walk, part_of.tolist())
    assert max(lengths) > 3  # the path goes somewhere


def test_a_chain_collapses_by_pointer_jumping():
    """A chain of 2,000 wait states back and forth between two locations: in one
    part it collapses to nothing that leaves it, in two every wait crosses."""
    n = 2000
    location = (np.arange(n) % 2).astype(np.int32)  # events alternate between 0 and 1
    stride = n + 1
    ev = np.arange(2, n)
    w_key = location[ev].astype(np.int64) * stride + ev
    w_to = ev - 1  # each waits for the event before it, on the other location
    o = np.argsort(w_key)
    g = (location, w_key[o], w_to[o], np.empty(0, np.int64), np.zeros(1, np.int64),
         np.empty(0, np.int64))
    walk = Walk(0, -1, True, np.full(2, -1, np.int64), np.empty(0, np.int64),
                np.empty(0, np.int64))
    assert walk_in_parts(g, walk, np.zeros(2, np.int64)) == single_walk(g, walk)
    assert walk_in_parts(g, walk, np.arange(2)) == single_walk(g, walk)
