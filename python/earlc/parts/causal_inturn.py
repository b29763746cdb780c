"""The pattern search of a trace bigger than memory: its parts stamped one
after another in one process (docs/memory.md, "Search and races"), with the
matches of the search in one piece.

The stamps in parts take three steps (frontier.py), which a driver of
parts in turn makes with two passes over the parts, after the ghosts' pass of
every analysis in turn (InTurn.pass1):

  pass A, part by part: the values of the pattern's classes that the part
          holds (as event keys: location and position in the whole trace),
          which of its ghosts' owners must stamp, and its symbolic pass
          (frontier.symbolic_pass), written to the scratch folder;
  solve:  the crossing events' clocks from every part's summary (frontier.solve);
          each part's needs' clocks to the scratch folder;
  pass B, part by part: the part replayed with the true clocks of its needs,
          stamping its own values' events and those other parts asked for;
          their whole trace ids (from the spilled timestamps), places, stamps
          and what a match shows of them are kept: the EventTable.

The search then runs on the EventTable as the search in parts does on every
process (parts/search.py), as one block.  Held in memory at once: one part,
then the EventTable and the values (4 x L + 33 and 8 bytes per event of the
pattern's classes), and during the solve every part's crossing events' clocks
(12 + 4 x L bytes each).  A trace whose happened-before order has a cycle
across parts (an inconsistent trace) is refused: its replay in rounds would
take one pass over every part per round.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .. import _core
from .._core import Error
from ..clocks import sorted_unique
from . import frontier
from .inturn import InTurn
from .replay import ReplayStats, own_events_at
from .search import ATTRIBUTES, EventTable, _region_ids, _threads, merged_stats


class CycleAcrossParts(Error, ValueError):
    """The happened-before order has a cycle across parts: no stamps in turn."""


def _keys(part, ids):
    """(location, position in the whole trace) of events of a part."""
    ids = np.asarray(ids, dtype=np.int64)
    return part.trace.events.location[ids].astype(np.int64), part.positions(ids)


class StampsInTurn:
    """The stamps of chosen events of every part in turn: `pass_a(p, part,
    wanted)` for each part (wanted: events of the part, own or ghosts, whose
    stamps are asked for), `solve()`, then `pass_b(p, part)` for each part gives
    (own events stamped, their stamps) with every part's ghost asks included."""

    def __init__(self, it: InTurn, threads: int):
        self.it, self.threads = it, threads
        self.parts = it.pp.parts
        self.asks: List[List[np.ndarray]] = [[] for _ in range(self.parts)]  # to owner: keys
        self.own: List[np.ndarray] = [None] * self.parts
        self.stats = ReplayStats()
        self.stats.extra["method"] = "frontier"

    def pass_a(self, p: int, part, wanted: np.ndarray) -> None:
        ev = part.trace.events
        wanted = sorted_unique(wanted)
        own = part.own[ev.location[wanted]] if len(wanted) else np.zeros(0, bool)
        self.own[p] = np.stack(_keys(part, wanted[own])) if own.any() else \
            np.empty((2, 0), np.int64)
        ghosts = wanted[~own]
        if len(ghosts):
            loc, pos = _keys(part, ghosts)
            owner = self.it.pp.partition.part_of[loc]
            for q in np.unique(owner).tolist():
                self.asks[q].append(np.stack([loc[owner == q], pos[owner == q]]))
        summary = frontier.symbolic_pass(part, self.threads) if self.parts > 1 else b""
        self.it.scratch.write("hs%d.bin" % p, np.frombuffer(summary, np.uint8))
        self.stats.bytes_sent += len(summary)

    def solve(self) -> None:
        if self.parts == 1:
            self.it.scratch.write("hc0.bin", np.empty(0, np.uint8))
            return
        summaries = [self.it.scratch.load("hs%d.bin" % p, np.uint8).tobytes()
                     for p in range(self.parts)]
        try:
            clocks = frontier.solve(summaries, self.it.pp.partition.part_of)
        except frontier.NoOrder:
            raise CycleAcrossParts(
                "the happened-before order of this trace has a cycle across its parts (an "
                "inconsistent trace, docs/patterns.md): its stamps cannot be computed one "
                "part after another; search it in one piece (--memory unlimited) or under "
                "mpiexec") from None
        del summaries
        for p, c in enumerate(clocks):
            self.it.scratch.delete("hs%d.bin" % p)
            self.it.scratch.write("hc%d.bin" % p, np.frombuffer(c, np.uint8))
            self.stats.bytes_received += len(c)
        self.stats.rounds = 2

    def pass_b(self, p: int, part):
        """(own events stamped, _core.VectorClocks of them)."""
        ev = part.trace.events
        keys = [self.own[p]] + self.asks[p]
        keys = np.concatenate(keys, axis=1) if keys else np.empty((2, 0), np.int64)
        stamped = sorted_unique(own_events_at(ev, keys[0], keys[1])) if keys.shape[1] else \
            np.empty(0, np.int64)
        clocks = self.it.scratch.load("hc%d.bin" % p, np.uint8).tobytes()
        result = frontier.final_pass(part, stamped, self.threads, clocks,
                                     alone=self.parts == 1)
        self.it.scratch.delete("hc%d.bin" % p)
        return stamped, result


def search_in_turn(it: InTurn, program, name: Optional[str], limit: Optional[int],
                   threads: int, teams: int, pruning: bool, progress=None):
    """The raw result (as _core.search gives it) of the whole trace's search,
    and the EventTable of its values' events."""
    it.progress.later = 2
    if it.times is None:
        it.pass1()
    stamps = StampsInTurn(it, threads)
    values: List[list] = []  # per part, per class: (locations, positions), rows x arity
    for p in range(it.pp.parts):
        part = it.open(p, pass_no=1)
        got = _core.search_part_values(part.trace.states._core, program, name=name)
        arrays = [np.frombuffer(v, dtype=np.int64) for (_, _, _, v) in got]
        values.append([(k[:3], _keys(part, a)) for k, a in zip(got, arrays)])
        stamps.pass_a(p, part, np.concatenate(arrays) if arrays else np.empty(0, np.int64))
        it.let_go(part)
        del part
        it.progress.end()
    stamps.solve()
    attrs, rows = [], []
    for p in range(it.pp.parts):
        part = it.open(p, pass_no=2)
        ev = part.trace.events
        stamped, clocks = stamps.pass_b(p, part)
        piece = np.empty(len(stamped), dtype=ATTRIBUTES)
        piece["event"] = it.times.count_before(*part.keys(stamped))
        piece["location"], piece["position"] = _keys(part, stamped)
        piece["time"] = ev.time[stamped]
        piece["kind"] = ev.kind[stamped]
        piece["region"] = _region_ids(part.trace, stamped) if len(stamped) else []
        attrs.append(piece)
        rows.append(np.frombuffer(clocks.stamps(), dtype=np.uint32).reshape(len(stamped),
                                                                            it.n_locations))
        del clocks
        it.let_go(part)
        del part
        it.progress.end()
    width = it.n_locations
    table = EventTable(np.concatenate(attrs) if attrs else np.empty(0, ATTRIBUTES),
                       np.concatenate(rows) if rows else np.empty((0, width), np.uint32))
    del attrs, rows
    classes, chunks = [], []
    for k, (first, second, arity) in enumerate(c for c, _ in values[0]):
        ids = [table.ids_at(*values[p][k][1]).reshape(-1, arity) for p in range(it.pp.parts)]
        ids = np.concatenate(ids)
        ids = ids[np.lexsort(ids.T[::-1])] if len(ids) else ids
        classes.append((first, second, arity, len(ids)))
        chunks.append(ids.ravel())
    del values
    query = _core.SearchQuery(
        program, name, classes, np.concatenate(chunks) if chunks else np.empty(0, np.int64),
        width, *(np.ascontiguousarray(table.attrs[c]) for c in ("event", "location",
                                                                "position")),
        table.stamps.ravel(), threads=threads, progress=progress)
    run = dict(threads=threads, teams=teams, pruning=pruning, tasks=8 * _threads(threads),
               block=0, blocks=1)
    while query.pending() is not None:
        raw = query.execute(subpattern=True, **run)
        query.solved(np.frombuffer(memoryview(raw["events"]).tobytes(), dtype=np.int64))
    raw = query.execute(limit=int(limit or 0), progress=progress, **run)
    events = np.frombuffer(memoryview(raw["events"]).tobytes(), dtype=np.int64)
    stamps.stats.extra["table_bytes"] = table.nbytes
    raw = dict(raw, events=events.tobytes(),
               stats=merged_stats([raw["stats"]], [stamps.stats], table, teams))
    raw["stats"]["parts"] = it.pp.parts
    return raw, table


def matches_in_turn(it: InTurn, pattern, name: Optional[str] = None,
                    limit: Optional[int] = None, threads: Optional[int] = None, teams: int = 1,
                    pruning: bool = True, progress=None):
    """InTurn.search: the whole trace's Matches (earlc.search.search's
    arguments), the events' attributes from the EventTable."""
    import warnings

    from ..search import PartMatches, PatternError, PatternWarning, _pattern_error, parse
    from .._core import TraceError

    program = parse(pattern)
    names = program.patterns()
    if name is not None and name not in names:
        raise PatternError("pattern: no pattern named '%s' (the text defines: %s)"
                           % (name, ", ".join(names)))
    if limit is not None and (isinstance(limit, bool) or
                              not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError("limit must be a positive integer, not %r" % (limit,))
    threads = it.threads if threads is None else threads
    for what, value, low in (("threads", threads, 0), ("teams", teams, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError("%s must be an integer >= %d, not %r" % (what, low, value))
    if progress is not None:
        it.progress.fn = progress
    try:
        raw, table = search_in_turn(it, program, name, limit, int(threads), int(teams),
                                    bool(pruning))
    except TraceError as exc:
        raise _pattern_error(exc) from None
    stub = it.stub()
    stub.trace.part = stub  # times are counted from the whole trace's first event
    m = PartMatches(stub.trace, raw, name if name is not None else names[-1], table, True,
                    None)
    for message in m.warnings:
        warnings.warn(message, PatternWarning, stacklevel=3)
    return m


__all__ = ["search_in_turn", "matches_in_turn", "StampsInTurn", "CycleAcrossParts"]
