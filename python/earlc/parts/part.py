"""A part's trace: every event of its own locations and the ghosts of the
others (csrc/include/earl_part.h), and the whole trace's event ids.

Opening a part is collective: every part reads the definitions and plans the
same partition, reads its own locations, exports to every other part the
ghosts it needs (in P - 1 rounds, one destination each: _ghosts_in_rounds),
adds the ghosts of each round as they arrive, and orders its events.  With
collectives="representatives" (or "delayers", for the root causes) the
collectives travel apart, before the rounds: each instance's members meet at
one part, which chooses what every other part needs of them
(_exchange_representatives, earl_part_represent, as the analysis in turn
chooses them); they are merged with the other ghosts location by location as
the rounds bring them (by_location, merge_ghosts).  Each step's failure on any
part ends every part with the same error (Exchange.agree).

Event ids of a part are positions in the part's own total order, which is the
whole trace's order restricted to the part's events: (timestamp, location,
position on the location), where a ghost keeps its position in the whole
trace.  The whole trace's id of an event is the number of events before it in
that order, counted by every part over its own locations and summed
(`global_ids`): the ids a report shows do not depend on the partition.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from .. import _core
from ..trace import Trace
from .exchange import Exchange
from .plan import Partition, plan

#: an earl_ghost record (earl_part.h), for reading what a part received
GHOST_RECORD = np.dtype([
    ("time", "<u8"), ("position", "<u8"), ("partner", "<i8"), ("bytes", "<u8"),
    ("request", "<u8"), ("location", "<i4"), ("ref", "<u4"), ("peer", "<i4"),
    ("peer_rank", "<u4"), ("tag", "<u4"), ("requested_source", "<i4"),
    ("requested_tag", "<i4"), ("seq", "<u4"), ("members", "<u4"), ("kind", "u1"),
    ("reserved", "u1", (3,))])
assert GHOST_RECORD.itemsize == _core.GHOST_RECORD_BYTES
#: an earl_coll_member row (earl_part.h): an own member of a collective
#: instance, for the choice of the representatives other parts get
COLL_MEMBER = np.dtype([
    ("time", "<u8", (4,)), ("position", "<u8", (4,)), ("sent", "<u8"), ("received", "<u8"),
    ("comm", "<u4"), ("seq", "<u4"), ("location", "<i4"), ("region", "<u4"), ("root", "<i4"),
    ("root_rank", "<u4"), ("rank", "<u4"), ("op", "u1"), ("reserved", "u1", (3,))])
assert COLL_MEMBER.itemsize == _core.COLL_MEMBER_BYTES

#: an event key (Part.event_keys) is location << POSITION_BITS | position
POSITION_BITS = 40

#: how the collectives may travel (open_part), each holding what the ones
#: before it hold: "representatives" (the members the built-in wait states
#: read), "delayers" (besides, what the root causes read: the member that
#: delays the others, and every member in that member's part), "all" (every
#: member to every part of its communicator)
COLLECTIVES = ("representatives", "delayers", "all")


def holds_enough(have: str, need: str) -> bool:
    """Whether a part whose collectives came as `have` can analyse what needs
    them as `need` (COLLECTIVES)."""
    return COLLECTIVES.index(have) >= COLLECTIVES.index(need)


class Part:
    """This process's part of a trace analysed in parts."""

    def __init__(self, trace: Trace, partition: Partition, index: int,
                 exchange: Optional[Exchange], ghost_positions: Dict[int, np.ndarray],
                 ghosts_received: int):
        self.trace = trace
        self.partition = partition
        self.index = index
        #: how the parts talk (collective methods); None for a part of an
        #: analysis in parts one after another (inturn.py), which numbers events
        #: from spilled tables instead
        self.exchange = exchange
        #: per location: does this part hold all of its events?
        self.own = partition.part_of == index
        #: per ghost location, the positions its ghosts have in the whole trace
        self.ghost_positions = ghost_positions
        self.ghosts_received = ghosts_received
        #: the whole trace's events, first and last timestamps (open_part)
        self.whole = {}
        #: what the analyses in parts exchanged, by what exchanged it (the root
        #: causes: bytes sent, collective steps, rounds of the long-term replay)
        self.stats = {}
        self._own_times = None
        #: how the collectives came (open_part, COLLECTIVES): "all" members,
        #: "representatives" (only what the built-in wait states read) or
        #: "delayers" (and what the root causes read)
        self.collectives = "all"

    def definitions(self) -> "DefinitionsOnly":
        """The trace as a property of the analysis in parts sees it (ctx.trace):
        its definitions, not its events."""
        return DefinitionsOnly(self.trace, self.partition.parts)

    # -- event keys ------------------------------------------------------------------
    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Each event's position on its location in the whole trace.  Not kept
        in a table per event (that would hold 4 bytes per event of the part for
        its whole life, through the root causes' peak): found location by
        location (a location's ids ascend with its positions), or for a
        question about many of the part's events from such a table made for
        the question and let go."""
        ids = np.asarray(ids, dtype=np.int64)
        ev = self.trace.events
        if len(ids) > len(ev) // 8:
            return self._position_table()[ids].astype(np.int64)
        out = np.empty(len(ids), dtype=np.int64)
        if not len(ids):
            return out
        loc = ev.location[ids]
        if (loc == loc[0]).all():
            groups = [(int(loc[0]), None)]
        else:
            order = np.argsort(loc, kind="stable")
            cuts = (np.flatnonzero(np.diff(loc[order])) + 1).tolist()
            groups = [(int(loc[order[a]]), order[a:b])
                      for a, b in zip([0] + cuts, cuts + [len(ids)])]
        for l, sel in groups:
            events = ev.of_location(l)
            mine = ids if sel is None else ids[sel]
            # searched in the column's own type: another would copy the column
            at = np.searchsorted(events, mine.astype(events.dtype))
            ghost = self.ghost_positions.get(l)
            got = at if ghost is None else ghost[at]
            if sel is None:
                out[:] = got
            else:
                out[sel] = got
        return out

    def _position_table(self) -> np.ndarray:
        """Per event of the part, its position on its location in the whole
        trace (int32 while positions fit)."""
        ev = self.trace.events
        top = max([len(ev.of_location(l)) for l in np.nonzero(self.own)[0].tolist()] +
                  [int(g[-1]) + 1 for g in self.ghost_positions.values() if len(g)] + [0])
        table = np.empty(len(ev), dtype=np.int32 if top < 1 << 31 else np.int64)
        for l in range(len(self.own)):
            events = ev.of_location(l)
            if not len(events):
                continue
            ghost = self.ghost_positions.get(l)
            table[events] = np.arange(len(events)) if ghost is None else ghost
        return table

    def event_keys(self, ids: np.ndarray) -> np.ndarray:
        """Each event as one int64 that every part holding it shares: location
        << 40 | position in the whole trace (ids_of_keys: back)."""
        ids = np.asarray(ids, dtype=np.int64)
        loc = self.trace.events.location[ids].astype(np.int64)
        return (loc << POSITION_BITS) | self.positions(ids)

    def ids_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """This part's event id of each event key (event_keys), -1 where the
        part does not hold the event."""
        keys = np.asarray(keys, dtype=np.int64)
        ev = self.trace.events
        loc = keys >> POSITION_BITS
        pos = keys & ((1 << POSITION_BITS) - 1)
        out = np.full(len(keys), -1, dtype=np.int64)
        n_loc = len(self.own)
        for l in np.unique(loc).tolist():
            if not 0 <= l < n_loc:
                continue
            sel = np.nonzero(loc == l)[0]
            events = ev.of_location(l)
            ghost = self.ghost_positions.get(l)
            if ghost is None:
                if not self.own[l]:
                    continue
                at = pos[sel]
                ok = at < len(events)
                out[sel[ok]] = events[at[ok]]
            else:
                at = np.searchsorted(ghost, pos[sel])
                ok = at < len(ghost)
                ok[ok] = ghost[at[ok]] == pos[sel][ok]
                out[sel[ok]] = events[at[ok]]
        return out

    def keys(self, ids: np.ndarray):
        """(time, location, position in the whole trace) of each event: the
        whole trace's order."""
        ids = np.asarray(ids, dtype=np.int64)
        ev = self.trace.events
        return (ev.time[ids].astype(np.uint64), ev.location[ids].astype(np.int64),
                self.positions(ids))

    def count_before(self, time: np.ndarray, location: np.ndarray,
                     position: np.ndarray) -> np.ndarray:
        """Per key: how many of this part's own events come before it in the
        whole trace's order."""
        time = np.asarray(time, dtype=np.uint64)
        location = np.asarray(location, dtype=np.int64)
        position = np.asarray(position, dtype=np.int64)
        out = np.zeros(len(time), dtype=np.int64)
        for l, times in self.own_times().items():
            left = np.searchsorted(times, time, side="left")    # times strictly before
            right = np.searchsorted(times, time, side="right")  # up to equal times
            out += np.where(location < l, left, np.where(location > l, right, 0))
            same = location == l
            out[same] += position[same]
        return out

    def own_times(self) -> Dict[int, np.ndarray]:
        """Timestamps of each own location's events, ascending."""
        if self._own_times is None:
            ev = self.trace.events
            self._own_times = {int(l): ev.time[ev.of_location(int(l))]
                               for l in np.nonzero(self.own)[0]}
        return self._own_times

    def global_ids(self, ids: np.ndarray) -> np.ndarray:
        """Collective: the whole trace's event id of each of these events (of
        this part; -1 stays -1).  Every part must call it, each with its own ids."""
        ids = np.asarray(ids, dtype=np.int64)
        valid = ids >= 0
        t, l, p = self.keys(ids[valid])
        gathered = self.exchange.allgather((t, l, p))
        sizes = [len(g[0]) for g in gathered]
        T = np.concatenate([g[0] for g in gathered]) if gathered else np.empty(0, np.uint64)
        L = np.concatenate([g[1] for g in gathered]) if gathered else np.empty(0, np.int64)
        P = np.concatenate([g[2] for g in gathered]) if gathered else np.empty(0, np.int64)
        counts = self.exchange.allreduce_sum(self.count_before(T, L, P))
        first = int(np.sum(sizes[:self.exchange.rank]))
        out = np.full(len(ids), -1, dtype=np.int64)
        out[valid] = counts[first:first + int(valid.sum())]
        return out


    # -- collective instances ------------------------------------------------------------
    def _instance_firsts(self):
        """Per collective instance of the part's EARL layer, its first member
        (the event that made it: instances are numbered in that order)."""
        st = self.trace.states
        start = st.coll_member_start
        members = st.coll_members
        n = len(start) - 1
        if n <= 0:
            return np.empty(0, np.int64)
        return members[start[:-1].astype(np.int64)].astype(np.int64)

    def global_instances(self, instances: np.ndarray) -> np.ndarray:
        """Collective: the whole trace's number of each of these collective
        instances of this part (-1 stays -1).  Instances are numbered in the
        order of their first member; an instance is counted by the part of its
        first member's location (every part sees all members of the instances
        it has a member of)."""
        instances = np.asarray(instances, dtype=np.int64)
        firsts = self._instance_firsts()
        valid = instances >= 0
        t, l, p = self.keys(firsts[instances[valid]])
        gathered = self.exchange.allgather((t, l, p))
        T = np.concatenate([g[0] for g in gathered])
        L = np.concatenate([g[1] for g in gathered])
        P = np.concatenate([g[2] for g in gathered])
        mine = firsts[self.own[self.trace.events.location[firsts]]] if len(firsts) else firsts
        mt, ml, mp = self.keys(np.sort(mine))
        order = np.lexsort((mp, ml, mt))  # the whole trace's order
        mt, ml, mp = mt[order], ml[order], mp[order]
        counts = np.zeros(len(T), dtype=np.int64)
        if len(mt):
            # instances of this part ordered before each key: a merge of sorted keys
            keys = np.rec.fromarrays((mt, ml, mp), names="t,l,p")
            probe = np.rec.fromarrays((T, L, P), names="t,l,p")
            counts = np.searchsorted(keys, probe, side="left").astype(np.int64)
        counts = self.exchange.allreduce_sum(counts)
        first = sum(len(g[0]) for g in gathered[:self.exchange.rank])
        out = np.full(len(instances), -1, dtype=np.int64)
        out[valid] = counts[first:first + int(valid.sum())]
        return out


class PartOfTraceError(_core.Error, RuntimeError):
    """What a property may not read of a part of a trace: its events through
    ctx.trace (they are this process's part only)."""


class DefinitionsOnly:
    """ctx.trace of a property analysing a part of a trace: the definitions of
    the whole trace (every part reads them all), and no events.  A property that
    reads the events of ctx.trace directly would see one part and count it as
    the whole trace; this says so in one line, naming what to use instead."""

    #: what every part knows of the whole trace
    ALLOWED = frozenset({
        "path", "creator", "otf2_version", "locations", "processes", "regions",
        "communicators", "groups", "system_tree", "strings", "definition_count",
        "timer_resolution", "clock_offset", "start_time", "duration_ticks", "duration",
        "seconds", "time_seconds", "part"})

    def __init__(self, trace, parts: int):
        self._trace, self._parts = trace, parts

    def __getattr__(self, name):
        if name in DefinitionsOnly.ALLOWED:
            return getattr(self._trace, name)
        raise PartOfTraceError(
            "ctx.trace.%s: the trace is analysed in %d parts, one per MPI process, and a "
            "property sees its process's part: ctx.trace gives the definitions only "
            "(locations, regions, communicators, ...); read events through the context "
            "(ctx.events, ctx.events_of_kind, ctx.enters_of, ctx.published; docs/plugins.md)"
            % (name, self._parts))

    def __len__(self):
        return self.__getattr__("__len__")


def open_part(path, exchange: Exchange, threads: int = 0, progress=None,
              partition: Optional[Partition] = None, salvage: bool = False,
              collectives: str = "all") -> Part:
    """Collective: this process's part of the trace at `path`, split into
    exchange.size parts (plan.py) unless `partition` is given.

    collectives: "all" (every member of the collectives of a communicator
    with an own location), "representatives" (only the members the
    built-in wait states read, earl_part.h) or "delayers" (those, and what
    the root causes read: each instance's delaying member, and every member
    in its part); collectives_for says which a catalog needs."""
    if collectives not in COLLECTIVES:
        raise ValueError("collectives must be 'all', 'delayers' or 'representatives', not %r"
                         % (collectives,))
    representatives = collectives != "all"
    error, reading, part_of = None, None, None
    try:
        reading = _core.Reading(str(path), threads=threads, progress=progress,
                                salvage=bool(salvage))
        if partition is None:
            partition = plan(reading.definitions(), exchange.size)
    except Exception as exc:  # every part must learn of it (Exchange.agree)
        error = exc
    exchange.agree(error)
    me = exchange.rank
    try:
        reading.read(partition.mask(me))
    except Exception as exc:
        error = exc
    exchange.agree(error)
    chosen = None
    if representatives:  # first, so that each round's ghosts are added as they come
        chosen = _exchange_representatives(
            reading, _own_members(reading, partition, exchange), partition, exchange,
            _core.REPRESENT_DELAYERS if collectives == "delayers" else 0)
    rounds = _ghosts_in_rounds(reading, partition, exchange, representatives)
    chunks = rounds if chosen is None else by_location(rounds, chosen)
    del chosen
    try:  # each round's ghosts added (and let go) before the next round's arrive
        part = assemble(reading, chunks, partition, me, exchange, threads,
                        fold=folds(collectives))
        part.collectives = collectives
    except Exception as exc:
        error = exc
        try:  # the other parts are still in the rounds: take part in them
            for _ in rounds:
                pass
        except Exception:  # a later round's failure elsewhere: this part's error stays
            pass
    del chunks, rounds
    exchange.agree(error)
    part.whole = _whole_trace(part)
    return part


def collectives_for(properties=None, plugins=(), packages: bool = True,
                    strict: bool = False) -> str:
    """How the collectives of a part may travel for the analysis of this
    catalog (engine.selection's arguments): "representatives" when every
    chosen property is a built-in other than the root causes (the built-in
    wait states read only the members earl_part_representatives picks),
    "delayers" when the root causes are among the built-ins chosen (they
    read besides each instance's delaying member everywhere, and every member
    in its part), else "all" (a plugin may read every member)."""
    from ..analysis.engine import selection

    return collectives_of(selection(properties, plugins, packages, strict)[1])


def collectives_of(chosen) -> str:
    """collectives_for of the properties engine.selection chose."""
    if not all(getattr(p, "source", None) == "built-in" for p in chosen):
        return "all"
    if any(getattr(p, "group", None) == "root_cause" for p in chosen):
        return "delayers"
    return "representatives"


def _ghosts_in_rounds(reading, partition: Partition, exchange: Exchange,
                      representatives: bool):
    """Collective, a generator: the ghosts every other part sends this one,
    in P - 1 rounds; in round r, part p exports what part p + r needs of its
    own locations (earl_part_export with the locations of the other parts
    left out) and receives what part p - r exports for it.  So a part holds
    the records of one destination at a time beside what it received in the
    round, not those of every destination at once (80 bytes a record, the
    open's largest transient), nor what earlier rounds brought, which its
    consumer adds to the reading before it asks for the next round.  Yields
    the buffers received, one per part with ghosts for this one, each holding
    whole locations sorted by (location, position).  Every part must drive it
    to its end (open_part does, also when its own use of a buffer failed).
    With representatives the collectives stay out of the records
    (_own_members lists them)."""
    me, size = exchange.rank, exchange.size
    part_of = np.ascontiguousarray(partition.part_of, dtype=np.int32)
    for r in range(1, size):
        dest = (me + r) % size
        error, records, counts = None, None, np.zeros(size, dtype=np.int64)
        try:
            only = np.where((part_of == me) | (part_of == dest), part_of, -1).astype(np.int32)
            got = reading.export(only, partition.parts, me, members=representatives)
            offsets = np.frombuffer(got[0], dtype=np.uint64).astype(np.int64)
            # only dest's: the calls every part compares (MPI_Init, MPI_Finalize)
            # are exported for every part in every round
            size_of = GHOST_RECORD.itemsize
            records = np.frombuffer(got[1], dtype=np.uint8)[
                int(offsets[dest]) * size_of:int(offsets[dest + 1]) * size_of]
            counts[dest] = len(records)
            del got
        except Exception as exc:  # every part must learn of it (Exchange.agree)
            error = exc
        exchange.agree(error)
        got, _ = exchange.alltoallv(records, counts)
        del records
        if len(got):
            yield got
        del got


def _own_members(reading, partition: Partition, exchange: Exchange) -> np.ndarray:
    """Collective: this part's own collective members (earl_coll_member rows,
    each once) of the communicators with members in other parts, for the
    choice of the representatives before the rounds; the records of that
    export (every destination's) are let go at once, before any round."""
    error, rows = None, None
    try:
        part_of = np.ascontiguousarray(partition.part_of, dtype=np.int32)
        got = reading.export(part_of, partition.parts, exchange.rank, members=True)
        rows = np.frombuffer(got[2], dtype=COLL_MEMBER)
        del got
    except Exception as exc:  # every part must learn of it (Exchange.agree)
        error = exc
    exchange.agree(error)
    return rows


def _chooser(members: np.ndarray, parts: int) -> np.ndarray:
    """Per collective member row, the part that chooses its instance's
    representatives: instances spread over the parts by (comm, seq), so
    that every member of an instance meets at one part."""
    key = members["comm"].astype(np.uint64) * np.uint64(0x9E3779B1) + members["seq"]
    return (key % np.uint64(parts)).astype(np.int64)


def _exchange_representatives(reading, members, partition: Partition,
                              exchange: Exchange, flags: int = 0) -> np.ndarray:
    """Collective, two all-to-alls: every part sends its own collective
    members (earl_coll_member rows) to the chooser of their instance
    (_chooser), which picks each part's representatives
    (earl_part_represent with `flags`, as the analysis in turn does) and
    sends them there.  Returns the ghost records this part received, sorted by
    (location, position).  A failure of the choice on any part ends every
    part (Exchange.agree) before the second all-to-all."""
    rows = np.frombuffer(members, dtype=COLL_MEMBER)
    opaque = np.dtype((np.void, COLL_MEMBER.itemsize))  # faster copies than the fields
    dest = _chooser(rows, exchange.size)
    order = np.argsort(dest, kind="stable")
    send = rows.view(opaque)[order]
    counts = np.bincount(dest, minlength=exchange.size) * COLL_MEMBER.itemsize
    del rows, dest, order, members
    got, _ = exchange.alltoallv(send, counts)
    del send
    rows = np.frombuffer(got, dtype=COLL_MEMBER)
    # as earl_part_export lists them: (comm, seq, time and location and position of the END)
    order = np.lexsort((rows["position"][:, 2], rows["location"], rows["time"][:, 2],
                        rows["seq"], rows["comm"]))
    rows = rows.view(opaque)[order].view(COLL_MEMBER)
    del got, order
    error, records, counts = None, None, None
    try:
        offsets, records = reading.representatives(rows, partition.part_of, partition.parts,
                                                   flags)
        counts = np.diff(np.frombuffer(offsets, dtype=np.uint64).astype(np.int64)) * \
            GHOST_RECORD.itemsize
    except Exception as exc:  # every part must learn of it
        error = exc
    del rows
    exchange.agree(error)
    got, _ = exchange.alltoallv(records, counts)
    del records
    table = np.frombuffer(got, dtype=GHOST_RECORD)
    # each chooser's records are sorted: together, they are sorted here
    order = np.lexsort((table["position"], table["location"]))
    return table.view(np.dtype((np.void, GHOST_RECORD.itemsize)))[order].view(GHOST_RECORD)


def by_location(chunks, representatives: np.ndarray):
    """The ghosts of the buffers `chunks` gives (GHOST_RECORD bytes, each
    holding whole locations sorted by (location, position), no location in
    two) location by location, each merged with that location's
    representatives (sorted the same way; merge_ghosts), then the locations
    that have representatives only: one location at a time, so that the
    merge copies one location's records, not every ghost.  Each buffer is let
    go once its last location is given."""
    reps_loc = representatives["location"]
    done = np.zeros(len(representatives), dtype=bool)
    for chunk in chunks:
        records = np.frombuffer(chunk, dtype=GHOST_RECORD)
        del chunk
        locs = np.unique(records["location"])
        at = np.searchsorted(records["location"], locs, side="left").tolist()
        end = np.searchsorted(records["location"], locs, side="right").tolist()
        rat = np.searchsorted(reps_loc, locs, side="left").tolist()
        rend = np.searchsorted(reps_loc, locs, side="right").tolist()
        for a, b, c, d in zip(at, end, rat, rend):
            mine = records[a:b]
            if d > c:
                done[c:d] = True
                yield merge_ghosts([representatives[c:d]], mine)
            else:
                yield mine
            del mine
        del records
    rest = representatives[~done]
    if len(rest):
        locs = rest["location"]
        cuts = np.flatnonzero(np.diff(locs)) + 1
        for a, b in zip([0] + cuts.tolist(), cuts.tolist() + [len(rest)]):
            yield rest[a:b]


def merge_ghosts(representatives, records: np.ndarray) -> np.ndarray:
    """Ghost records of several sources as one buffer sorted by (location,
    position), each event once: the representatives of collectives (a list
    of GHOST_RECORD arrays, each sorted so) beside the other ghosts (records,
    sorted so); where both
    hold an event, the representative's record stays (it carries the count
    of the members it stands for).  The analysis in turn and the MPI parts
    both merge so."""
    runs = [np.ascontiguousarray(r) for r in representatives if r is not None and len(r)]
    if not runs:
        return records
    # each source is sorted: one linear merge (earl_ghosts_merge), the
    # representatives first
    return np.frombuffer(_core.merge_ghosts(runs + [np.ascontiguousarray(records)]),
                         dtype=GHOST_RECORD)


def folds(collectives: str) -> bool:
    """Whether a part whose collectives travel so (COLLECTIVES) folds its
    ghosts' message calls (earl_part_fold_calls: the LEAVE of a ghost call
    holding only message events, followed by another call, stays out: about
    a quarter of the ghosts of a halo exchange).  The catalogs such a part can
    analyse (the built-ins without the root causes, collectives_of) read the
    LEAVE of a message call only on the location that owns the call; the
    root causes and plugins may read any, and get every LEAVE."""
    return collectives == "representatives"


def _ghost_positions(table: np.ndarray, positions: Dict[int, np.ndarray]) -> None:
    """Per ghost location, its ghosts' positions in the whole trace (the records
    of a location come together, ascending), into positions: int32 while they
    fit (4 bytes per ghost held for the part's life), else int64."""
    if len(table):
        locs = table["location"]
        starts = np.concatenate(([0], np.nonzero(np.diff(locs))[0] + 1, [len(table)]))
        positions_of(locs[starts[:-1]], starts, table["position"], positions)


def assemble(reading, ghosts, partition: Partition, index: int, exchange: Optional[Exchange],
             threads: int = 0, fold: bool = False) -> Part:
    """Part `index` from a reading of its own locations and the ghost records
    other parts sent it (buffers of GHOST_RECORD, each holding whole locations,
    sorted): the ghosts are added, the events ordered.  fold: the ghosts'
    message calls are folded first (folds, earl_part_fold_calls)."""
    positions, received = {}, 0
    for chunk in ghosts:
        received += len(np.frombuffer(chunk, dtype=GHOST_RECORD))
        if fold:
            chunk = _core.fold_ghost_calls(chunk)
        reading.add_ghosts(chunk)
        table = np.frombuffer(chunk, dtype=GHOST_RECORD)
        _ghost_positions(table, positions)
        del chunk, table  # copied into the reading: gone before the order is made
    return finish_part(reading, partition, index, exchange, positions, received, threads)


def finish_part(reading, partition: Partition, index: int, exchange: Optional[Exchange],
                positions: Dict[int, np.ndarray], received: int, threads: int = 0) -> Part:
    """Part `index` from a reading whose ghosts were added: the events
    ordered, with the ghost locations' positions in the whole trace and the
    ghost records received (assemble; the analysis in turn adds its ghosts
    packed, inturn.InTurn.open)."""
    core = reading.finish()
    trace = Trace(core, threads)
    part = trace.part = Part(trace, partition, index, exchange, positions, received)
    return part


def positions_of(locations: np.ndarray, offsets: np.ndarray, positions: np.ndarray,
                 into: Dict[int, np.ndarray]) -> None:
    """Per ghost location, its positions in the whole trace, into `into`, from
    one array of every location's (locations[i]'s are positions[offsets[i]:
    offsets[i + 1]], ascending): int32 while they fit (4 bytes per ghost held
    for the part's life), else int64."""
    for l, a, b in zip(locations.tolist(), offsets[:-1].tolist(), offsets[1:].tolist()):
        pos = positions[a:b]
        if b > a:
            into[int(l)] = pos.astype(np.int32 if int(pos[-1]) < 1 << 31 else np.int64)


def _whole_trace(part: Part) -> dict:
    """Collective: the whole trace's event count, first and last timestamps."""
    ev = part.trace.events
    ids = np.nonzero(part.own[ev.location])[0] if len(ev) else np.empty(0, np.int64)
    mine = (len(ids), int(ev.time[ids[0]]) if len(ids) else None,
            int(ev.time[ids[-1]]) if len(ids) else None)
    every = part.exchange.allgather(mine)
    firsts = [f for _, f, _ in every if f is not None]
    lasts = [t for _, _, t in every if t is not None]
    return {"events": sum(n for n, _, _ in every),
            "first_time": min(firsts) if firsts else None,
            "last_time": max(lasts) if lasts else None}


__all__ = ["Part", "open_part", "assemble", "finish_part", "positions_of", "folds",
           "merge_ghosts", "by_location", "collectives_for", "collectives_of", "COLLECTIVES",
           "holds_enough", "GHOST_RECORD", "COLL_MEMBER", "POSITION_BITS", "DefinitionsOnly",
           "PartOfTraceError"]
