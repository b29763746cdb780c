"""The replays of a trace in parts: the happened-before replay (vector
timestamps equal to the whole trace's, csrc/hb/earl_hb.h, "the replay of a
part") and the matches-before replay of the race analysis (csrc/races/
earl_races.h), each part replaying its own locations and the parts passing each
other the clocks of what crosses them.

A replay is a sequence of steps on one part's state (`ClockReplay`,
`RaceReplay`), whose inputs and outputs are bytes for each other part; any
driver can run them: the MPI processes of `drive` below (one part each, the
bytes exchanged by Exchange.alltoall_bytes), or one process that analyses the
parts one after another and keeps what crosses in files.

1. `requests()`: what this part's events wait for, as REQUEST records
   (location and position in the whole trace of the event it is keyed by, the
   kind of clock, the ticket) for each part that produces it.
2. `grant(incoming)`: at the producer, what other parts wait for.
3. Rounds: `step()` replays until every own location is done or waits for a
   ghost clock not received, and returns the clocks replayed since for each
   part (a record is the ticket and the clock); `receive(incoming)` takes in
   what the other parts sent.  Repeat while any part sent something.
4. When no part sent anything but some still wait, the trace has a cycle (an
   inconsistent trace): `waiting()` gives this part's earliest waiting event
   with its key in the whole trace's order; the driver picks the smallest key
   of all parts and that part calls `force(event)`, which replays it without
   the clocks it lacks, as the whole trace's replay does.  Back to 3.
5. `finish()`: the stamps of the own events asked for.

Rounds: the longest chain of dependencies that cross parts, about one per
iteration of a program whose messages or collectives cross a part's border.
Bytes per round: the clocks of the crossing events, 8 + 4 x locations each.

The stamps (`replay`) take a few exchanges instead (`drive_frontier`): a
symbolic pass on every part (frontier.py), the crossing events' clocks solved
by the parts together, each on its own crossing events, in rounds that double
how far back their clocks see (doubling.py: about log2 of the longest chain,
one round on a halo exchange), a pass with the true clocks; the rounds above
are their fallback for a trace with cycles, and the races' replay.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .part import Part

#: a clock asked for: where the event it is keyed by is in the whole trace, its
#: kind (0 for the happened-before replay; earl_races_crossing for the races),
#: and the ticket the asking part knows it by
REQUEST = np.dtype([("location", "<i4"), ("position", "<i8"), ("ticket", "<u8"),
                    ("kind", "u1")])


@dataclass
class ReplayStats:
    """What the replay of one part cost: `rounds` of exchange, the clock bytes
    it sent and received, the cycles broken (of the whole trace, on every part)."""

    rounds: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    cycles_broken: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


class PartReplay:
    """The steps of one part's replay (see the module); `_core` is the C part
    (_core.PartClocks or _core.PartRaces), `_needs()` what it waits for as
    (kinds, events, producing locations)."""

    _core = None

    def __init__(self, part: Part):
        self.part = part
        self.parts = part.partition.parts

    def _needs(self):
        raise NotImplementedError

    def _export(self, to: int, kinds: np.ndarray, events: np.ndarray, tickets: np.ndarray):
        raise NotImplementedError

    # -- 1, 2: who waits for what --------------------------------------------------------
    def requests(self) -> List[bytes]:
        """For each part, the REQUEST records of the clocks this part waits for
        and that part produces."""
        kinds, events, producer = self._needs()
        part_of = self.part.partition.part_of
        records = np.empty(len(events), dtype=REQUEST)
        records["location"] = self.part.trace.events.location[events]
        records["position"] = self.part.positions(events)
        records["ticket"] = np.arange(len(events), dtype=np.uint64)
        records["kind"] = kinds
        owner = part_of[producer] if len(events) else np.empty(0, np.int64)
        return [records[owner == q].tobytes() for q in range(self.parts)]

    def grant(self, incoming: Sequence[bytes]) -> None:
        """The requests of every part (incoming[q] from part q): what goes there."""
        for q, buf in enumerate(incoming):
            asked = np.frombuffer(buf, dtype=REQUEST)
            if not len(asked):
                continue
            events = held_events_at(self.part, asked["location"], asked["position"])
            self._export(q, np.ascontiguousarray(asked["kind"]), events,
                         np.ascontiguousarray(asked["ticket"]))

    # -- 3, 4: rounds ------------------------------------------------------------------------
    def step(self) -> List[bytes]:
        """Replay as far as the clocks received allow; the clocks for each part."""
        self._core.run()
        offsets, records = self._core.take(self.parts)
        offsets = np.frombuffer(offsets, dtype=np.uint64)
        size = len(records) // int(offsets[-1]) if int(offsets[-1]) else 0
        view = memoryview(records)
        return [view[int(offsets[q]) * size:int(offsets[q + 1]) * size]
                for q in range(self.parts)]

    def receive(self, incoming: Sequence[bytes]) -> None:
        for buf in incoming:
            if len(buf):
                self._core.receive(buf)

    def unfinished(self) -> int:
        """Own locations not done."""
        return self._core.unfinished()

    def waiting(self) -> Optional[Tuple[int, int, int, int]]:
        """This part's waiting event that comes first: (timestamp, location,
        position in the whole trace, event id here), None when none waits."""
        e = self._core.waiting()
        if e < 0:
            return None
        ev = self.part.trace.events
        return (int(ev.time[e]), int(ev.location[e]),
                int(self.part.positions(np.array([e]))[0]), int(e))

    def force(self, event: int) -> None:
        """Replay `event` (the next of a waiting own location) without the clocks
        it lacks: a cycle broken."""
        self._core.force(int(event))

    # -- 5 --------------------------------------------------------------------------------------
    def finish(self):
        """The result of the part's replay (_core.VectorClocks, _core.Races)."""
        return self._core.finish()


class ClockReplay(PartReplay):
    """The happened-before replay of one part: the stamps of own events."""

    def __init__(self, part: Part, stamped: np.ndarray, threads: Optional[int] = None,
                 progress=None):
        super().__init__(part)
        trace = part.trace
        stamped = np.ascontiguousarray(stamped, dtype=np.int64)
        self._core = _core.PartClocks(trace.states._core, stamped,
                                      threads=trace.threads if threads is None else threads,
                                      progress=progress)

    def _needs(self):
        ghosts = np.frombuffer(self._core.needs(), dtype=np.int64)
        loc = self.part.trace.events.location[ghosts].astype(np.int64)
        return np.zeros(len(ghosts), np.uint8), ghosts, loc

    def _export(self, to, kinds, events, tickets):
        self._core.export(to, events, tickets)


class RaceReplay(PartReplay):
    """The matches-before replay of one part's race analysis (earlc.races): a
    send's clock goes to its receiver's part, the receiver's clock after a
    synchronous send back to the sender's, a collective member's begin to the
    parts of the other members."""

    SENT, ACK, BEGIN = 0, 1, 2  # earl_races_crossing

    def __init__(self, part: Part, core):
        super().__init__(part)
        self._core = core

    def _needs(self):
        kinds, events = self._core.needs()
        kinds = np.frombuffer(kinds, dtype=np.uint8)
        events = np.frombuffer(events, dtype=np.int64)
        ev = self.part.trace.events
        at = events.copy()
        ack = kinds == self.ACK  # made by the receiver of the own send
        if ack.any():
            at[ack] = self.part.trace.states.gather("recvptr", events[ack])
        return kinds, events, ev.location[at].astype(np.int64)

    def _export(self, to, kinds, events, tickets):
        self._core.export(to, kinds, events, tickets)


def held_events_at(part: Part, location: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The ids of events this part holds, given by (location, position in the
    whole trace): an own location's position is its index there, a ghost's is
    found among the positions its ghosts carry."""
    ev = part.trace.events
    out = np.empty(len(location), dtype=np.int64)
    location = np.asarray(location)
    position = np.asarray(position)
    for l in np.flatnonzero(np.bincount(location.astype(np.int64))).tolist():
        sel = np.nonzero(location == l)[0]
        ghost = part.ghost_positions.get(int(l))
        index = position[sel] if ghost is None else np.searchsorted(ghost, position[sel])
        out[sel] = ev.of_location(int(l))[index]
    return out


def own_events_at(ev, location: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The ids of own events given by (location, position on it): an own
    location holds every event, so its position is its index there."""
    out = np.empty(len(location), dtype=np.int64)
    location = np.asarray(location)
    for l in np.flatnonzero(np.bincount(location.astype(np.int64))).tolist():
        sel = np.nonzero(location == l)[0]
        out[sel] = ev.of_location(int(l))[np.asarray(position)[sel]]
    return out


#: how replay() stamps: "frontier" (a symbolic pass, the solve by every part
#: in rounds that double, a final pass; falling back to rounds on a cycle),
#: "gather" (the same with the solve on the first part, which receives every
#: crossing event: for comparisons) or "rounds" (the replay in rounds only)
METHOD = "frontier"


def replay(part: Part, stamped: np.ndarray, threads: Optional[int] = None,
           progress=None):
    """Collective: the stamps of `stamped` (own events of this part, sorted) in
    the whole trace's happened-before order.  Returns (_core.VectorClocks,
    ReplayStats).  In a symbolic pass on every part, the crossing events'
    clocks solved by every part on its own ones in a few rounds (doubling.py),
    a pass with the true clocks (drive_frontier); a trace with cycles is
    replayed in rounds (drive)."""
    if METHOD == "rounds":
        return drive(part, lambda: ClockReplay(part, stamped, threads=threads,
                                               progress=progress))
    return drive_frontier(part, stamped, threads=threads, progress=progress)


def drive_frontier(part: Part, stamped: np.ndarray, threads: Optional[int] = None,
                   progress=None):
    """Collective: replay() in three steps (frontier.py): a symbolic pass on
    every part, the crossing events' clocks solved by the parts together in a
    few rounds (doubling.py), a final pass; the replay in rounds when the trace
    has a cycle (stats.extra["fallback"] says why)."""
    import time

    from . import doubling, frontier

    ex = part.exchange
    t0 = time.perf_counter()
    stats = ReplayStats()
    stats.extra["method"] = "frontier"
    threads = part.trace.threads if threads is None else threads
    error, clocks = None, b""
    if ex.size > 1:
        summary = b""
        try:
            summary = frontier.symbolic_pass(part, threads)
        except Exception as exc:  # every part learns of it
            error = exc
        ex.agree(error)
        stats.extra["symbolic_seconds"] = time.perf_counter() - t0
        stats.extra["summary_bytes"] = len(summary)
        t1, c1, fallback = time.perf_counter(), time.process_time(), None
        try:
            box, summary = [summary], None  # solve() lets it go once read
            solve = _solve_on_first if METHOD == "gather" else doubling.solve
            clocks = solve(ex, box, part.partition.part_of, stats)
        except frontier.NoOrder as exc:  # on every part alike
            fallback = str(exc)  # the rounds run outside, the solve's frames gone
        if fallback is not None:
            clocks, more = drive(part, lambda: ClockReplay(part, stamped, threads=threads,
                                                           progress=progress))
            more.rounds += stats.rounds
            more.bytes_sent += stats.bytes_sent
            more.bytes_received += stats.bytes_received
            more.extra["method"] = "rounds"
            more.extra["fallback"] = fallback
            more.seconds = time.perf_counter() - t0
            return clocks, more
        stats.extra["solve_seconds"] = time.perf_counter() - t1
        stats.extra["solve_cpu_seconds"] = time.process_time() - c1  # this process's
    result, t1 = None, time.perf_counter()
    try:
        result = frontier.final_pass(part, stamped, threads, clocks,
                                     progress=progress, alone=ex.size == 1)
        stats.cycles_broken = int(result.info()["cycles_broken"])  # broken alone only
    except Exception as exc:
        error = exc
    ex.agree(error)
    stats.extra["final_seconds"] = time.perf_counter() - t1
    stats.seconds = time.perf_counter() - t0
    return result, stats


def _solve_on_first(ex, summary: list, part_of: np.ndarray, stats) -> bytes:
    """Collective: doubling.solve's answer the way it was first computed, for
    comparisons: every part's summary to the first part, which solves the
    system over all crossing events in one sweep (frontier.solve) and sends
    each part its needs' clocks."""
    from . import frontier

    mine = summary.pop()
    incoming = list(ex.alltoall_bytes([mine if q == 0 else b"" for q in range(ex.size)]))
    stats.bytes_sent += len(mine) if ex.rank else 0
    del mine
    received = sum(len(b) for q, b in enumerate(incoming) if q != ex.rank)
    answers, error = [b""] * ex.size, None
    if ex.rank == 0:
        try:
            answers = [b"\x01" + a for a in frontier.solve(incoming, part_of)]
        except frontier.NoOrder as exc:
            answers = [b"\x00" + str(exc).encode()] * ex.size
        except Exception as exc:
            error = exc
    del incoming
    replies = ex.alltoall_bytes(answers)
    ex.agree(error)
    stats.rounds += 2
    stats.bytes_sent += sum(len(a) for q, a in enumerate(answers) if q != ex.rank)
    received += len(replies[0]) if ex.rank else 0
    stats.bytes_received += received
    stats.extra["solve_rounds"] = 1
    stats.extra["solve_held"] = received
    if replies[0][:1] != b"\x01":
        raise frontier.NoOrder(bytes(replies[0][1:]).decode())
    return memoryview(replies[0])[1:]


def drive(part: Part, make) -> tuple:
    """Collective: the steps of the replay make() returns (a PartReplay), run by
    every part of part.exchange; returns (its finish(), ReplayStats)."""
    import time

    ex = part.exchange
    t0 = time.perf_counter()
    stats = ReplayStats()
    error, rp = None, None
    try:
        rp = make()
        requests = rp.requests()
    except Exception as exc:  # every part learns of it
        error, requests = exc, [b""] * ex.size
    ex.agree(error)
    incoming = ex.alltoall_bytes(requests)
    try:
        rp.grant(incoming)
    except Exception as exc:
        error = exc
    ex.agree(error)
    while True:
        try:
            outgoing = rp.step()
            unfinished = rp.unfinished()
        except Exception as exc:
            error, outgoing, unfinished = exc, [b""] * ex.size, 0
        sent = sum(len(b) for b in outgoing)
        # what travels, and whether anything did, anything waits, anything failed
        incoming, total = ex.round(outgoing, np.array([sent, unfinished, error is not None],
                                                      np.int64))
        stats.rounds += 1
        stats.bytes_sent += sent
        stats.bytes_received += sum(len(b) for b in incoming)
        if total[2]:
            ex.agree(error)
        try:
            rp.receive(incoming)
        except Exception as exc:
            error = exc
        if total[0]:
            continue  # a failure to take them in is told in the next round
        if not total[1]:  # nothing travelled: nothing was taken in, nothing failed
            break
        # every part waits and nothing travels: a cycle, broken where the whole
        # trace's replay breaks it, at the waiting event that comes first
        keys = ex.allgather(rp.waiting())
        owner = min((k[:3], q) for q, k in enumerate(keys) if k is not None)[1]
        if owner == ex.rank:
            try:
                rp.force(keys[owner][3])
                stats.cycles_broken += 1
            except Exception as exc:
                error = exc
    try:
        result = rp.finish()
    except Exception as exc:
        error, result = exc, None
    ex.agree(error)
    stats.cycles_broken = int(ex.allreduce_sum(np.array([stats.cycles_broken], np.int64))[0])
    stats.seconds = time.perf_counter() - t0
    return result, stats


def stamps_of(part: Part, ids: np.ndarray, threads: Optional[int] = None, progress=None):
    """Collective: the stamps of any events this part holds (own events and
    ghosts: a ghost's stamp comes from its owner).  Returns (events ids, their
    location, position in the whole trace, stamps (n, locations) uint32,
    ReplayStats)."""
    from ..clocks import sorted_unique

    ev = part.trace.events
    ex = part.exchange
    ids = sorted_unique(ids)
    own = part.own[ev.location[ids]] if len(ids) else np.zeros(0, bool)
    ghosts = ids[~own]
    # ask the owners of the ghosts to stamp them too
    loc = ev.location[ghosts].astype(np.int64)
    pos = part.positions(ghosts)
    owner = part.partition.part_of[loc] if len(ghosts) else np.empty(0, np.int64)
    asks = np.empty(len(ghosts), dtype=REQUEST)
    asks["location"], asks["position"], asks["ticket"] = loc, pos, np.arange(len(ghosts))
    incoming = ex.alltoall_bytes([asks[owner == q].tobytes() for q in range(ex.size)])
    asked = [own_events_at(ev, a["location"], a["position"])
             for a in (np.frombuffer(b, dtype=REQUEST) for b in incoming)]
    stamped = sorted_unique(np.concatenate([ids[own]] + asked)) if any(len(a) for a in asked) \
        else ids[own]
    clocks, stats = replay(part, stamped, threads=threads, progress=progress)
    width = len(part.trace.locations)
    table = np.frombuffer(clocks.stamps(), dtype=np.uint32).reshape(len(stamped), width)
    answers = [table[np.searchsorted(stamped, a)].tobytes() for a in asked]
    replies = ex.alltoall_bytes(answers)
    stamps = np.empty((len(ids), width), dtype=np.uint32)
    stamps[own] = table[np.searchsorted(stamped, ids[own])]
    ghost_rows = np.empty((len(ghosts), width), dtype=np.uint32)
    for q, buf in enumerate(replies):
        got = np.frombuffer(buf, dtype=np.uint32).reshape(-1, width)
        ghost_rows[np.nonzero(owner == q)[0]] = got
    stamps[~own] = ghost_rows
    return ids, ev.location[ids].astype(np.int32), part.positions(ids), stamps, stats


__all__ = ["PartReplay", "ClockReplay", "RaceReplay", "ReplayStats", "REQUEST", "replay", "drive",
           "drive_frontier",
           "stamps_of", "own_events_at", "held_events_at"]
