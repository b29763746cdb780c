"""The critical path of a trace analysed in parts (critical_path.py's walk).

The walk goes back in time along a location to its latest wait state (or
OpenMP point), then on the location waited for: it crosses parts at about
every iteration of a program's loop, so passing it from part to part would
take as many rounds.  Instead its graph travels once: every part sends part 0
the wait states its own locations wait at (the waiting event and the event
waited for), its OpenMP points with where the path goes on from each, whether
it records MPI and its last event on a CPU location.  Part 0 numbers the
events these name in the whole trace's order (the order of the
single-process analysis's ids, which is all the walk compares), adds what
every part knows itself (each process's MPI_Init and MPI_Finalize: every part
holds them), walks both paths with the C core and sends each part the
stretches on its locations (their ends as event keys).  Each part then times
its stretches as the single-process analysis does: the sums are integer
ticks, the same in any order.

What part 0 holds for this: a few numbers per wait state of the whole trace
(two events, each as its event key and time, the location and position being
in the key: 32 bytes).
"""
from __future__ import annotations

import numpy as np

from .arrays import gather_segments
from .critical_path import (Walk, _cpu_locations, _finalize_waits, _is_mpi_program,
                            _omp_successors, _path_waits, _scalasca_walk, _stretches)
from .parts import Parts, _concat
from .records import PathGraph

#: the location of an event key (Part.event_keys: location << 40 | position)
_LOCATION_SHIFT = 40


def _refs(part, ids) -> np.ndarray:
    """Events as rows (event key, time) of an int64 table: the key holds the
    location and the position, so (key, time) sorted by time then key is the
    whole trace's order."""
    ids = np.asarray(ids, dtype=np.int64)
    if not len(ids):
        return np.empty((0, 2), np.int64)
    return np.stack((part.event_keys(ids),
                     part.trace.events.time[ids].astype(np.int64)), axis=1)


def _location(keys) -> np.ndarray:
    return np.asarray(keys, dtype=np.int64) >> _LOCATION_SHIFT


def _own_last_cpu_event(ctx, parts: Parts) -> int:
    """The last event of an own CPU location (-1: none)."""
    loc = ctx.events.location
    cpu = np.zeros(ctx.n_locations, dtype=bool)
    cpu[_cpu_locations(ctx)] = True
    cpu &= parts.own
    hit = np.nonzero(cpu[loc])[0]
    return int(hit[-1]) if len(hit) else -1


def walks_in_parts(ctx, parts: Parts, sp):
    """Collective: the stretches (location, start, end as this part's event
    ids; -1: the location's start, n_events: its end) of Scalasca's critical
    path and of the trace's on this part's locations, None for a path there is
    not (the module says how)."""
    part = parts.part
    n = np.int64(ctx.n_events + 1)

    def mine():
        w_key, w_to = _path_waits(ctx, sp, parts.own)
        offset, nxt = _omp_successors(ctx, sp.omp_keys)
        last = _own_last_cpu_event(ctx, parts)
        return {"wait": _refs(part, w_key % n), "to": _refs(part, w_to),
                "omp": _refs(part, sp.omp_keys % n), "omp_offset": offset,
                "omp_next": _refs(part, nxt), "mpi": _is_mpi_program(ctx),
                "last": _refs(part, [last] if last >= 0 else [])}
    every = parts.alltoall(lambda: [mine()] + [None] * (parts.size - 1))
    is_mpi = None
    if parts.rank == 0:
        is_mpi = any(e["mpi"] for e in every)
    is_mpi = parts.allgather(lambda: is_mpi)[0]
    # every part knows Scalasca's start (and says what is missing for it)
    walk = _scalasca_walk(ctx, sp, is_mpi, part.whole.get("events", 0) > 0)

    def stretches():
        if parts.rank != 0:
            return [None] * parts.size
        return _walk_on_part_0(ctx, parts, sp, every, walk)
    mine_back = parts.alltoall(stretches)[0]
    out = []
    for s in mine_back:
        if s is None:
            out.append(None)
            continue
        loc, start, end = s
        local = []
        for keys, none in ((start, -1), (end, -2)):
            ids = np.full(len(keys), -1, dtype=np.int64)
            some = keys != none
            ids[some] = part.ids_of_keys(keys[some])
            if (ids[some] < 0).any():
                raise RuntimeError("a stretch of the critical path ends at an event this part "
                                   "does not hold")
            if none == -2:
                ids[~some] = ctx.n_events  # the location's end
            local.append(ids)
        out.append((loc, local[0], local[1]))
    return out


def _walk_on_part_0(ctx, parts: Parts, sp, every, scalasca: Walk):
    """Part 0: both walks over every part's graph, the stretches sorted out by
    the part of their location (per part: [scalasca's, the trace's], each
    (location, start key or -1, end key or -2) or None)."""
    part = parts.part
    refs = [_refs(part, np.empty(0, np.int64))]
    for e in every:
        refs += [e["wait"], e["to"], e["omp"], e["omp_next"], e["last"]]
    # what part 0 adds: MPI_Init, MPI_Finalize, Scalasca's start
    f_key, f_to = _finalize_waits(ctx, sp)
    n = np.int64(ctx.n_events + 1)
    extra = [f_key % n, f_to]
    if scalasca is not None:
        extra += [scalasca.init_of[scalasca.init_of >= 0],
                  np.asarray([scalasca.event] if scalasca.event >= 0 else [], np.int64)]
    refs.append(_refs(part, _concat(extra, np.int64)))
    table = np.concatenate(refs)
    del refs
    # the events, numbered in the whole trace's order: by time, then location and
    # position (the key)
    order = np.lexsort((table[:, 0], table[:, 1]))
    table = table[order]
    del order
    keep = np.ones(len(table), dtype=bool)
    keep[1:] = table[1:, 0] != table[:-1, 0]
    keys = table[keep, 0]  # the times have ordered the events: only the keys go on
    del table, keep
    K = len(keys)
    by_key = np.argsort(keys, kind="stable")
    sorted_keys = keys[by_key]

    def ids(r):
        r = np.asarray(r).reshape(-1, 2)
        return by_key[np.searchsorted(sorted_keys, r[:, 0])].astype(np.int64)

    def local_ids(events):
        return ids(_refs(part, events))
    stride = K + 1
    location = np.ascontiguousarray(_location(keys), dtype=np.int32)
    # the wait states and OpenMP points of every part
    w_key = _concat([location[ids(e["wait"])] * np.int64(stride) + ids(e["wait"])
                     for e in every], np.int64)
    w_to = _concat([ids(e["to"]) for e in every], np.int64)
    o = np.argsort(w_key, kind="stable")
    w_key, w_to = w_key[o], w_to[o]
    omp_key, omp_off, omp_next = [], [0], []
    for e in every:
        k = ids(e["omp"])
        omp_key.append(location[k] * np.int64(stride) + k)
        omp_next.append(ids(e["omp_next"]))
        omp_off.extend((np.asarray(e["omp_offset"][1:]) + omp_off[-1]).tolist())
    omp_key = _concat(omp_key, np.int64)
    omp_next = _concat(omp_next, np.int64)
    omp_off = np.asarray(omp_off, dtype=np.int64)
    o = np.argsort(omp_key, kind="stable")
    omp_off, (omp_next,) = gather_segments(omp_off, o, omp_next)
    omp_key = omp_key[o]

    def graph(walk: Walk, init_of, more_key, more_to):
        if len(more_key):
            key = np.concatenate((w_key, more_key))
            o = np.argsort(key, kind="stable")
            wk, wt = key[o], np.concatenate((w_to, more_to))[o]
        else:
            wk, wt = w_key, w_to
        return PathGraph(stride=stride, location=location, ends_at_start=walk.ends_at_start,
                         init_event=init_of, wait_key=wk, wait_partner=wt, omp_key=omp_key,
                         omp_next_offset=omp_off, omp_next_event=omp_next)
    none = np.empty(0, np.int64)
    found = []
    # Scalasca's path
    if scalasca is not None:
        init_of = np.full(ctx.n_locations, -1, dtype=np.int64)
        has = scalasca.init_of >= 0
        init_of[has] = local_ids(scalasca.init_of[has])
        start = int(local_ids([scalasca.event])[0]) if scalasca.event >= 0 else -1
        w = Walk(scalasca.location, start, scalasca.ends_at_start, init_of, none, none)
        found.append(_stretches(graph(w, init_of, none, none), w))
    else:
        found.append(None)
    # the trace's path: from the end of the CPU location whose events end last
    lasts = _concat([e["last"] for e in every], np.int64).reshape(-1, 2)
    if len(lasts):
        last = lasts[np.lexsort((lasts[:, 0], lasts[:, 1]))[-1]]
        init_of = np.full(ctx.n_locations, -1, dtype=np.int64)
        more_key = location[local_ids(f_key % n)] * np.int64(stride) + local_ids(f_key % n) \
            if len(f_key) else none
        more_to = local_ids(f_to) if len(f_to) else none
        w = Walk(int(_location(last[0])), -1, True, init_of, more_key, more_to)
        found.append(_stretches(graph(w, init_of, more_key, more_to), w))
    else:
        found.append(None)
    # each stretch to the part of its location, its ends as event keys
    out = [[None, None] for _ in range(parts.size)]
    for i, s in enumerate(found):
        if s is None:
            continue
        loc, start, end = s
        start_key = np.where(start >= 0, keys[np.maximum(start, 0)], -1)
        end_key = np.where(end < K, keys[np.minimum(end, K - 1)], -2)
        dest = parts.part_of[loc]
        for p in range(parts.size):
            sel = dest == p
            out[p][i] = (loc[sel], start_key[sel], end_key[sel])
    return out


__all__ = ["walks_in_parts"]
