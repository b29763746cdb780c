"""The critical path of a trace analysed in parts (critical_path.py's walk),
walked by every part on its own locations, with only the path's crossings
between parts gathered on part 0.

The walk goes back in time along a location to its latest wait state (or
OpenMP point), then on at the event waited for, taking every event once (the
C core's earl_rc_critical_walk).  Which events it takes does not depend on the
order it takes them in, and the stretch it adds at an event depends on that
event alone; so the path is the stretches of the events reachable from its
start, and a part can walk its own locations as soon as it knows where the
path enters them.  It crosses parts at about every iteration of a program's
loop: passing it from part to part, as Scalasca's backward replay does, would
take that many rounds of messages.  Instead every part contracts its own
share of the graph to where it leads out of the part, and part 0 walks only
the contracted graph, in three collective steps whatever the path's length:

1. every part sends the owner of each event its wait states (and OpenMP
   points) continue at on another part's location: the events where the
   path may *enter* that part (with whether it records MPI and its last event
   on a CPU location, which fix where the paths start);
2. every part follows each entry along its own locations, without walking
   them: each wait state leads to one next wait state, so a chain of them
   collapses by pointer jumping (log of its length passes over the array)
   to where it leaves the part (an entry of another part) or ends; an
   OpenMP point with several successors (a team barrier that several
   threads reached last) stays a node of its own.  Part 0 receives, per
   entry, where it leads (one event key, a branching node or nothing), and
   the branching nodes' successors;
3. part 0 finds the entries reachable from each path's start and sends every
   part its own; every part then walks its locations from them with the C
   core, as one process walks the whole trace (the stretches of events it
   reaches on other parts' locations left to their owners).

What part 0 holds: a few numbers per entry, that is per wait state whose
waiting and waited-for events lie in different parts (and per branching
OpenMP point), not per wait state of the whole trace.  Each part holds its
own locations' wait states, as it does for the root causes.  Each part times
its stretches as the single-process analysis does: the sums are integer
ticks, the same in any order.
"""
from __future__ import annotations

import numpy as np

from .critical_path import (Walk, _cpu_locations, _finalize_waits, _is_mpi_program,
                            _omp_successors, _path_waits, _scalasca_walk, _stretches)
from .parts import Parts, _concat
from .records import PathGraph

#: the location of an event key (Part.event_keys: location << 40 | position)
_LOCATION_SHIFT = 40
#: where an entry leads when the path ends in the part
_NOWHERE = np.iinfo(np.int64).min


def _own_last_cpu_event(ctx, parts: Parts) -> int:
    """The last event of an own CPU location (-1: none)."""
    loc = ctx.events.location
    cpu = np.zeros(ctx.n_locations, dtype=bool)
    cpu[_cpu_locations(ctx)] = True
    cpu &= parts.own
    hit = np.nonzero(cpu[loc])[0]
    return int(hit[-1]) if len(hit) else -1


def _sorted_unique(a) -> np.ndarray:
    """np.unique of int64 values by a sort (numpy's hashing unique is several
    times slower on these arrays of a few hundred thousand values)."""
    a = np.sort(np.asarray(a, dtype=np.int64))
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


def _ranges(lo, n) -> np.ndarray:
    """The positions lo[k] .. lo[k] + n[k] - 1 of every k, one after another."""
    start = np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.int64)
    return np.repeat(lo - start, n) + np.arange(int(np.sum(n)), dtype=np.int64)


class _Share:
    """One walk's graph on a part's own locations: its nodes (the wait states
    and OpenMP points of own locations, as sorted keys location * stride +
    event, a wait state winning over an OpenMP point at the same event, as in
    the C walk) with their successors (CSR events), and where each node's
    chain of single successors inside the part ends."""

    def __init__(self, ctx, parts: Parts, w_key, w_to, omp_key, omp_off, omp_next):
        self.ctx, self.parts = ctx, parts
        self.stride = np.int64(ctx.n_events + 1)
        self.location = ctx.events.location
        # the graph the C core walks (a later record of one waiting event wins)
        order = np.argsort(w_key, kind="stable")
        w_key, w_to = w_key[order], w_to[order]
        self.w_key, self.w_to = w_key, w_to
        self.omp_key, self.omp_off, self.omp_next = omp_key, omp_off, omp_next
        last = np.ones(len(w_key), dtype=bool)
        last[:-1] = w_key[1:] != w_key[:-1]
        wk, wt = w_key[last], w_to[last]
        keys = _sorted_unique(np.concatenate((wk, omp_key)))
        at = np.minimum(np.searchsorted(wk, keys), max(len(wk) - 1, 0))
        is_wait = wk[at] == keys if len(wk) else np.zeros(len(keys), dtype=bool)
        j = np.searchsorted(omp_key, keys)
        count = np.ones(len(keys), dtype=np.int64)
        omp_only = np.nonzero(~is_wait)[0]
        count[omp_only] = omp_off[j[omp_only] + 1] - omp_off[j[omp_only]]
        offset = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
        succ = np.empty(offset[-1], dtype=np.int64)
        w = np.nonzero(is_wait)[0]
        succ[offset[w]] = wt[np.searchsorted(wk, keys[w])]
        if len(omp_only):
            lo, n = omp_off[j[omp_only]], count[omp_only]
            succ[_ranges(offset[omp_only], n)] = omp_next[_ranges(lo, n)]
        self.keys, self.offset, self.succ = keys, offset, succ
        self.degree = count
        # each node's single successor inside the part (-1: none: the node is
        # where its chain ends, a sink), then the sink of every chain by
        # pointer jumping; a chain that runs into a circle has none (dead)
        nxt = np.full(len(keys), -1, dtype=np.int64)
        one = np.nonzero(count == 1)[0]
        s = succ[offset[one]]
        inside = parts.own[self.location[s]]
        nxt[one[inside]] = self.node_of(s[inside])
        sink = nxt < 0
        target = np.where(sink, np.arange(len(keys), dtype=np.int64), nxt)
        for _ in range(2 + int(np.log2(max(len(keys), 1)))):
            jumped = target[target]
            if np.array_equal(jumped, target):
                break
            target = jumped
        self.target = np.where(sink[target], target, -1) if len(keys) else target

    def node_of(self, events) -> np.ndarray:
        """The node the walk takes at each event of an own location: the
        location's latest key before it (-1: none, the path ends there)."""
        events = np.asarray(events, dtype=np.int64)
        base = self.location[events].astype(np.int64) * self.stride
        i = np.searchsorted(self.keys, base + events) - 1
        ok = i >= 0
        ok[ok] = self.keys[i[ok]] >= base[ok]
        return np.where(ok, i, -1)

    def node_at_end(self, location: int) -> int:
        """The node the walk takes from the end of a location (-1: none)."""
        i = int(np.searchsorted(self.keys, (location + 1) * self.stride - 1)) - 1
        return i if i >= 0 and self.keys[i] >= location * self.stride else -1

    def leads(self, nodes) -> np.ndarray:
        """Where the walk goes from each node on leaving the part: the event key
        of another part's event, a branching node (-1 - node) or _NOWHERE."""
        nodes = np.asarray(nodes, dtype=np.int64)
        out = np.full(len(nodes), _NOWHERE, dtype=np.int64)
        t = np.where(nodes >= 0, self.target[np.maximum(nodes, 0)], -1) if len(self.keys) \
            else np.full(len(nodes), -1, dtype=np.int64)
        branch = t >= 0
        branch[branch] = self.degree[t[branch]] > 1
        out[branch] = -1 - t[branch]
        one = t >= 0
        one[one] = self.degree[t[one]] == 1
        s = self.succ[self.offset[t[one]]]
        away = ~self.parts.own[self.location[s]]
        idx = np.nonzero(one)[0][away]
        out[idx] = self.parts.part.event_keys(s[away])
        return out

    def leads_of_events(self, events) -> np.ndarray:
        """leads() of the node at each event; an event of another part's
        location leads to itself."""
        events = np.asarray(events, dtype=np.int64)
        out = np.full(len(events), _NOWHERE, dtype=np.int64)
        here = self.parts.own[self.location[events]]
        out[~here] = self.parts.part.event_keys(events[~here])
        out[here] = self.leads(self.node_of(events[here]))
        return out

    def exits(self) -> np.ndarray:
        """Every successor event on another part's location."""
        s = self.succ
        return s[~self.parts.own[self.location[s]]] if len(s) else s

    def branches(self):
        """The branching nodes and where each successor leads: (node ids,
        CSR offsets, leads)."""
        b = np.nonzero(self.degree > 1)[0]
        n = self.degree[b]
        s = self.succ[_ranges(self.offset[b], n)]
        return b, np.concatenate(([0], np.cumsum(n))).astype(np.int64), self.leads_of_events(s)

    def walk(self, walk: Walk, entries, start_at_end: bool):
        """The stretches (location, start, end) on own locations of the walk
        from these own events (and from the end of walk.location when
        start_at_end), taking every event once."""
        ctx = self.ctx
        n_loc = ctx.n_locations
        init_of = np.concatenate((walk.init_of, [-1])).astype(np.int64)
        found = []
        if start_at_end:
            found.append(_stretches(self._graph(walk, init_of, self.omp_key, self.omp_off,
                                                self.omp_next), walk))
        entries = _sorted_unique(entries)
        if len(entries):
            # every entry as a successor of one OpenMP point on a location of
            # its own after every other, walked from that location's end
            key = np.concatenate((self.omp_key, [n_loc * self.stride]))
            off = np.concatenate((self.omp_off, [self.omp_off[-1] + len(entries)]))
            nxt = np.concatenate((self.omp_next, entries))
            found.append(_stretches(self._graph(walk, init_of, key, off, nxt),
                                    Walk(n_loc, -1, walk.ends_at_start, init_of,
                                         walk.more_key, walk.more_to)))
        if not found:
            e = np.empty(0, np.int64)
            return e, e, e
        loc, start, end = (np.concatenate(c) for c in zip(*found))
        mine = np.zeros(n_loc + 1, dtype=bool)
        mine[:n_loc] = self.parts.own
        keep = mine[loc]
        loc, start, end = loc[keep], start[keep], end[keep]
        # an event walked from two starts: its stretch once
        key = loc * self.stride + end
        o = np.argsort(key, kind="stable")
        once = np.ones(len(o), dtype=bool)
        once[1:] = key[o][1:] != key[o][:-1]
        first = np.sort(o[once])
        return loc[first], start[first], end[first]

    def _graph(self, walk: Walk, init_of, omp_key, omp_off, omp_next) -> PathGraph:
        return PathGraph(stride=int(self.stride),
                         location=np.ascontiguousarray(self.location, dtype=np.int32),
                         ends_at_start=walk.ends_at_start, init_event=init_of,
                         wait_key=self.w_key, wait_partner=self.w_to, omp_key=omp_key,
                         omp_next_offset=omp_off, omp_next_event=omp_next)


def _reached(graphs, start) -> np.ndarray:
    """Part 0: the sorted event keys of the entries reachable from a start (a
    list of (part, lead)) over every part's contracted graph (graphs[p]:
    (entry keys, their leads, branching nodes, CSR offsets, their leads)).
    The graph is held as arrays, the leads turned into indices of entries
    (>= 0), of branching nodes (<= -2) or nowhere (-1): about 17 bytes per
    entry, followed one step at a time."""
    keys = _concat([g[0] for g in graphs], np.int64)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    base = np.cumsum([0] + [len(g[2]) for g in graphs])

    def codes(part, leads):
        leads = np.asarray(leads, dtype=np.int64)
        out = np.full(len(leads), -1, dtype=np.int64)
        entry = leads >= 0
        at = np.searchsorted(keys, leads[entry])
        if entry.any() and ((at >= len(keys)).any() or
                            (keys[np.minimum(at, len(keys) - 1)] != leads[entry]).any()):
            raise RuntimeError("the critical path enters a part at an event it did not "
                               "announce")
        out[entry] = at
        branch = (leads < 0) & (leads != _NOWHERE)
        # a part's branching node -1 - node: its place among every part's
        nodes = -1 - leads[branch]
        out[branch] = -2 - (base[part] + np.searchsorted(graphs[part][2], nodes))
        return out
    entry_next = _concat([codes(p, g[1]) for p, g in enumerate(graphs)], np.int64)[order]
    del order
    b_off = _concat([g[3][:-1] + sum(len(h[4]) for h in graphs[:p])
                     for p, g in enumerate(graphs)] + [[sum(len(g[4]) for g in graphs)]],
                    np.int64)
    b_next = _concat([codes(p, g[4]) for p, g in enumerate(graphs)], np.int64)
    reached = np.zeros(len(keys), dtype=np.uint8)
    seen = np.zeros(len(b_off) - 1, dtype=np.uint8)
    # memoryviews: one element at a time without a Python object per entry
    nxt, r, sn, bo, bn = (memoryview(x) for x in (entry_next, reached, seen, b_off, b_next))
    todo = [int(c) for p, lead in start for c in codes(p, [lead])]
    while todo:
        c = todo.pop()
        while c >= 0 and not r[c]:  # a chain of entries, one lead each
            r[c] = 1
            c = nxt[c]
        if c <= -2 and not sn[-2 - c]:
            k = -2 - c
            sn[k] = 1
            todo.extend(bn[bo[k]:bo[k + 1]].tolist())
    return keys[reached.astype(bool)]


def _contracted(parts: Parts, share: _Share, entries, walk: Walk):
    """What a part sends part 0 of one walk: its entries (event keys) and where
    each leads, its branching nodes with where their successors lead, and
    where the walk leads from its start when it starts at the end of an own
    location."""
    b, off, bleads = share.branches()
    start = []
    if walk.event < 0 and parts.own[walk.location]:
        start = share.leads([share.node_at_end(walk.location)]).tolist()
    return (parts.part.event_keys(entries), share.leads_of_events(entries), b, off, bleads,
            start)


def _reached_keys(parts: Parts, walk: Walk, every) -> np.ndarray:
    """Part 0: the sorted event keys of the entries a walk reaches, from every
    part's _contracted."""
    if walk.event >= 0:
        start = [(int(parts.part_of[parts.part.trace.events.location[walk.event]]),
                  int(parts.part.event_keys([walk.event])[0]))]
    else:
        start = [(p, x) for p, e in enumerate(every) for x in e[5]]
    return _reached([e[:5] for e in every], start)


def _location_of(key) -> int:
    return int(key) >> _LOCATION_SHIFT


def walks_in_parts(ctx, parts: Parts, sp):
    """Collective: the stretches (location, start, end as this part's event
    ids; -1: the location's start, n_events: its end) of Scalasca's critical
    path and of the trace's on this part's locations, None for a path there is
    not (the module says how)."""
    part = parts.part
    n = np.int64(ctx.n_events + 1)
    loc = ctx.events.location
    w_key, w_to = _path_waits(ctx, sp, parts.own)
    omp_key = np.asarray(sp.omp_keys, dtype=np.int64)
    omp_off, omp_next = _omp_successors(ctx, omp_key)
    f_key, f_to = _finalize_waits(ctx, sp)
    mine = parts.own[(f_key // n).astype(np.int64)] if len(f_key) else np.zeros(0, bool)
    f_key, f_to = f_key[mine], f_to[mine]
    # the two walks' graphs: Scalasca's on the wait states, the trace's also
    # on the waits in MPI_Finalize
    shares = [_Share(ctx, parts, w_key, w_to, omp_key, omp_off, omp_next),
              _Share(ctx, parts, np.concatenate((w_key, f_key)),
                     np.concatenate((w_to, f_to)), omp_key, omp_off, omp_next)]
    del w_key, w_to

    # 1. the entries of every part, and where the paths start
    def entries_out():
        ex = _sorted_unique(np.concatenate([s.exits() for s in shares]))
        keys = part.event_keys(ex)
        dest = parts.part_of[loc[ex]] if len(ex) else np.zeros(0, np.int64)
        last = _own_last_cpu_event(ctx, parts)
        facts = (_is_mpi_program(ctx),
                 (int(ctx.events.time[last]), int(part.event_keys([last])[0]))
                 if last >= 0 else None)
        return [(keys[dest == p], facts) for p in range(parts.size)]
    got = parts.alltoall(entries_out)
    entry_keys = _sorted_unique(_concat([g[0] for g in got], np.int64))
    is_mpi = any(g[1][0] for g in got)
    lasts = [g[1][1] for g in got if g[1][1] is not None]
    del got
    scalasca = _scalasca_walk(ctx, sp, is_mpi, part.whole.get("events", 0) > 0)
    trace_start = _location_of(max(lasts)[1]) if lasts else None
    entries = part.ids_of_keys(entry_keys)
    if (entries < 0).any():
        raise RuntimeError("another part's wait state continues at an event this part "
                           "does not hold")
    if scalasca is not None and scalasca.event >= 0 and parts.own[loc[scalasca.event]]:
        entries = _sorted_unique(np.concatenate((entries, [scalasca.event])))
    walks = [scalasca, None]
    if trace_start is not None:
        walks[1] = Walk(trace_start, -1, True, np.full(ctx.n_locations, -1, dtype=np.int64),
                        np.empty(0, np.int64), np.empty(0, np.int64))

    # 2. the contracted graphs on part 0
    def contracted():
        mine = [_contracted(parts, share, entries, w) if w is not None else None
                 for share, w in zip(shares, walks)]
        return [mine] + [None] * (parts.size - 1)
    every = parts.alltoall(contracted)

    # 3. part 0: the entries each path reaches, to their parts
    def reached_out():
        if parts.rank != 0:
            return [None] * parts.size
        out = [[None, None] for _ in range(parts.size)]
        for i, w in enumerate(walks):
            if w is None:
                continue
            keys = _reached_keys(parts, w, [e[i] for e in every])
            dest = parts.part_of[keys >> _LOCATION_SHIFT] if len(keys) else keys
            for p in range(parts.size):
                out[p][i] = keys[dest == p]
        return out
    back = parts.alltoall(reached_out)[0]
    del every
    out = []
    for i, (share, w) in enumerate(zip(shares, walks)):
        if w is None:
            out.append(None)
            continue
        ids = part.ids_of_keys(back[i])
        if (ids < 0).any():
            raise RuntimeError("the critical path enters this part at an event it does not "
                               "hold")
        out.append(share.walk(w, ids, w.event < 0 and bool(parts.own[w.location])))
    return out


__all__ = ["walks_in_parts"]
