"""The pattern search of a trace in parts: the matches of the whole trace, in
the same canonical order, for any number of parts and threads
(docs/patterns.md, "In parts"; csrc/search/earl_search.h, "a trace in parts").

Each part holds the events of its own locations; the search needs every value
of every class of the pattern with the stamps of its events.  So:

1. each part lists the values it holds of each class (its own events; for a
   partner class the pairs whose first event is its own);
2. the owners stamp those events (earlc.parts.replay), and every part gathers
   all of them with their ids in the whole trace, their stamps and what a
   match shows of them (time, location, kind, region): `EventTable`;
3. every part gathers every part's values, in the whole trace's ids, and
   prepares the same query;
4. the sub-patterns used as types, then the pattern, are searched by all
   parts together, each part its block of the task list (the static split
   between teams, here between machines) with its threads sharing the block's
   tasks dynamically; the blocks' matches in block order are the answer.

Memory per part: the gathered events, 4 x locations (the stamp) + 33 bytes (id,
location, position, time, region, kind) each, and the values (8 bytes per event
of each).
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional

import numpy as np

from .. import _core
from ..clocks import sorted_unique
from ..events import NO_REGION
from .part import Part
from .replay import REQUEST, own_events_at, replay

#: what a match shows of an event, gathered from its owner
ATTRIBUTES = np.dtype([("event", "<i8"), ("location", "<i4"), ("position", "<u4"),
                       ("time", "<u8"), ("region", "<i8"), ("kind", "u1")])


class EventTable:
    """The events of a pattern's values, gathered on every part: sorted by their
    ids in the whole trace, with their places, stamps and attributes."""

    def __init__(self, attrs: np.ndarray, stamps: np.ndarray):
        order = np.argsort(attrs["event"], kind="stable")
        self.attrs = attrs[order]
        self.stamps = np.ascontiguousarray(stamps[order])
        self._keys = None

    def __len__(self) -> int:
        return len(self.attrs)

    @property
    def nbytes(self) -> int:
        return self.attrs.nbytes + self.stamps.nbytes

    def rows(self, ids: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.attrs["event"], ids)

    def ids_at(self, location: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The whole trace's ids of events given by (location, position)."""
        if self._keys is None:
            keys = (self.attrs["location"].astype(np.int64) << 32) | self.attrs["position"]
            order = np.argsort(keys)
            self._keys = (keys[order], self.attrs["event"][order])
        keys, ids = self._keys
        want = (np.asarray(location, np.int64) << 32) | np.asarray(position, np.int64)
        at = np.searchsorted(keys, want)
        if len(want) and (at.max(initial=0) >= len(keys) or (keys[np.minimum(at, len(keys) - 1)]
                                                               != want).any()):
            raise RuntimeError("pattern: internal error: an event of a value was not stamped")
        return ids[at]


def _region_ids(trace, ids: np.ndarray) -> np.ndarray:
    """The region a match shows of each event (search.Matches._attributes)."""
    ev = trace.events
    kind = ev.kind[ids]
    own = (kind == 0) | (kind == 1)
    enc = trace.states.enterptr_of(ids)
    around = np.where(enc >= 0, ev.region_of(np.maximum(enc, 0)), NO_REGION)
    return np.where(own, ev.region_of(ids), around).astype(np.int64)


def _agreed(ex, fn):
    """fn() on this part, the same verdict on every part (Exchange.agree)."""
    error, result = None, None
    try:
        result = fn()
    except Exception as exc:  # every part learns of it
        error = exc
    ex.agree(error)
    return result


def gather_values(part: Part, program, name: Optional[str], threads: int, progress=None):
    """Collective, steps 1 to 3: (the classes' (first, second, arity, rows), their
    values one after the other, the EventTable, replay statistics)."""
    trace = part.trace
    ex = part.exchange
    ev = trace.events
    values = _agreed(ex, lambda: _core.search_part_values(trace.states._core, program,
                                                          name=name))
    arrays = [np.frombuffer(v, dtype=np.int64) for (_, _, _, v) in values]
    held = sorted_unique(np.concatenate(arrays)) if arrays else np.empty(0, np.int64)
    own = part.own[ev.location[held]] if len(held) else np.zeros(0, bool)
    ghosts = held[~own]
    # the owners of ghosts in pairs stamp them too
    loc = ev.location[ghosts].astype(np.int64)
    owner = part.partition.part_of[loc] if len(ghosts) else np.empty(0, np.int64)
    asks = np.zeros(len(ghosts), dtype=REQUEST)
    asks["location"], asks["position"] = loc, part.positions(ghosts)
    incoming = ex.alltoall_bytes([asks[owner == q].tobytes() for q in range(ex.size)])
    asked = [own_events_at(ev, a["location"], a["position"])
             for a in (np.frombuffer(b, dtype=REQUEST) for b in incoming)]
    stamped = sorted_unique(np.concatenate([held[own]] + asked))
    clocks, stats = replay(part, stamped, threads=threads, progress=progress)
    gids = part.global_ids(stamped)
    piece = np.empty(len(stamped), dtype=ATTRIBUTES)
    piece["event"] = gids
    piece["location"] = ev.location[stamped]
    piece["position"] = part.positions(stamped)
    piece["time"] = ev.time[stamped]
    piece["kind"] = ev.kind[stamped]
    piece["region"] = _region_ids(trace, stamped) if len(stamped) else []
    width = len(trace.locations)
    every = ex.allgather((piece.tobytes(),
                          np.frombuffer(clocks.stamps(), dtype=np.uint32).tobytes()))
    del clocks
    table = EventTable(np.frombuffer(b"".join(a for a, _ in every), dtype=ATTRIBUTES),
                       np.frombuffer(b"".join(s for _, s in every), dtype=np.uint32)
                       .reshape(-1, width))
    del every
    # every part's values, in the whole trace's ids, sorted as the search wants them
    mine = []
    for (first, second, arity, _), local in zip(values, arrays):
        ids = table.ids_at(ev.location[local], part.positions(local)) if len(local) else local
        mine.append(ids.tobytes())
    pieces = ex.allgather(mine)
    classes, chunks = [], []
    for k, (first, second, arity, _) in enumerate(values):
        rows = np.frombuffer(b"".join(p[k] for p in pieces), dtype=np.int64).reshape(-1, arity)
        rows = rows[np.lexsort(rows.T[::-1])] if len(rows) else rows
        classes.append((first, second, arity, len(rows)))
        chunks.append(rows.ravel())
    stats.extra["table_bytes"] = table.nbytes
    return classes, (np.concatenate(chunks) if chunks else np.empty(0, np.int64)), table, stats


def _threads(threads: int) -> int:
    """The searching threads a value of `threads` gives (0: one per core)."""
    return threads if threads > 0 else (os.cpu_count() or 1)


def search(trace, program, name: Optional[str], limit: Optional[int], progress, threads: int,
           teams: int, pruning: bool, root: Optional[int]):
    """Collective: the raw result (as _core.search gives it) of the whole trace,
    the matches on `root` (None: on every part), and the EventTable."""
    part = trace.part
    ex = part.exchange
    mine_progress = progress if ex.is_root else None
    classes, values, table, rstats = gather_values(part, program, name, threads, mine_progress)
    query = _agreed(ex, lambda: _core.SearchQuery(
        program, name, classes, values, len(trace.locations),
        *(np.ascontiguousarray(table.attrs[c]) for c in ("event", "location", "position")),
        table.stamps.ravel(),
        threads=threads, progress=mine_progress))
    del values
    # every part makes the same tasks: 8 per thread of all parts
    tasks = 8 * int(ex.allreduce_sum(np.array([_threads(threads)], np.int64))[0])
    run = dict(threads=threads, teams=teams, pruning=pruning, tasks=tasks, block=ex.rank,
               blocks=ex.size)
    while query.pending() is not None:
        raw = _agreed(ex, lambda: query.execute(subpattern=True, **run))
        pieces = ex.allgather(_matches_bytes(raw))
        rows = np.frombuffer(b"".join(pieces), dtype=np.int64)
        _agreed(ex, lambda: query.solved(rows))
    raw = _agreed(ex, lambda: query.execute(limit=int(limit or 0), progress=mine_progress,
                                            **run))
    mine = (_matches_bytes(raw), raw["stats"], rstats)
    every = ex.allgather(mine) if root is None else ex.gather(mine, root=root)
    if every is None:  # gathered elsewhere
        return dict(raw, events=b"", rows=0), table, False
    columns = len(raw["columns"])
    events = np.frombuffer(b"".join(e for e, _, _ in every), dtype=np.int64).reshape(-1, columns)
    if limit:
        events = events[:limit]
    raw = dict(raw, events=events.tobytes(), rows=len(events),
               truncated=bool(limit and len(events) >= limit),
               stats=merged_stats([s for _, s, _ in every], [r for _, _, r in every], table,
                                  teams))
    return raw, table, True


def _matches_bytes(raw) -> bytes:
    """A part's matches as bytes to send (the search hands them over as a buffer
    that views the C result, which does not travel)."""
    return memoryview(raw["events"]).tobytes()


def merged_stats(stats: List[Dict], replays, table: EventTable, teams: int) -> Dict:
    """The statistics of a search in parts: work added over the parts (the
    threads listed with their part), the time of the slowest part; the rounds
    of the replay and the bytes of clocks sent between parts."""
    out = {k: sum(s[k] for s in stats) for k in ("nodes", "checks", "pruned", "tasks",
                                                 "stolen")}
    out["seconds"] = max(s["seconds"] for s in stats)
    out["prepare_seconds"] = 0.0  # the parts prepare together: the rounds below
    out["merge_seconds"] = max(s["merge_seconds"] for s in stats)
    out["stamped"] = len(table)
    out["stamp_bytes"] = table.nbytes
    threads = []
    for p, s in enumerate(stats):
        for t in s["threads"]:
            threads.append(dict(t, part=p, team=p * max(teams, 1) + t["team"]))
    out["threads"] = threads
    out["parts"] = len(stats)
    out["rounds"] = replays[0].rounds
    out["clock_bytes"] = sum(r.bytes_sent for r in replays)
    return out


__all__ = ["EventTable", "ATTRIBUTES", "gather_values", "search", "merged_stats"]
