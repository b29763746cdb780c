"""The happened-before replay of a trace in parts: vector timestamps equal to
the whole trace's, each part replaying its own locations and the parts passing
each other the clocks of the events that cross them (csrc/hb/earl_hb.h, "the
replay of a part").

The replay is a sequence of steps on one part's state (`ClockReplay`), whose
inputs and outputs are bytes for each other part; any driver can run them: the
MPI processes of `replay` below (one part each, the bytes exchanged by
Exchange.alltoall_bytes), or one process that analyses the parts one after
another and keeps what crosses in files.

1. `requests()`: the ghost events whose clocks this part's events wait for,
   as (location, position in the whole trace, ticket) for each owner part.
2. `grant(incoming)`: at the owner, the own events other parts wait for.
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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .part import Part

#: a ghost clock asked for: where the event is in the whole trace, and the
#: ticket the asking part knows it by
REQUEST = np.dtype([("location", "<i4"), ("position", "<i8"), ("ticket", "<u8")])


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


class ClockReplay:
    """The replay steps of one part (see the module)."""

    def __init__(self, part: Part, stamped: np.ndarray, threads: Optional[int] = None,
                 progress=None):
        self.part = part
        self.parts = part.partition.parts
        trace = part.trace
        stamped = np.ascontiguousarray(stamped, dtype=np.int64)
        self._core = _core.PartClocks(trace.states._core, stamped,
                                      threads=trace.threads if threads is None else threads,
                                      progress=progress)

    # -- 1, 2: who waits for what --------------------------------------------------------
    def requests(self) -> List[bytes]:
        """For each part, the REQUEST records of the ghost clocks this part waits for
        and that part owns."""
        ghosts = np.frombuffer(self._core.needs(), dtype=np.int64)
        ev = self.part.trace.events
        loc = ev.location[ghosts].astype(np.int64)
        owner = self.part.partition.part_of[loc] if len(ghosts) else np.empty(0, np.int64)
        records = np.empty(len(ghosts), dtype=REQUEST)
        records["location"] = loc
        records["position"] = self.part.positions(ghosts)
        records["ticket"] = np.arange(len(ghosts), dtype=np.uint64)
        return [records[owner == q].tobytes() for q in range(self.parts)]

    def grant(self, incoming: Sequence[bytes]) -> None:
        """The requests of every part (incoming[q] from part q): the own events
        whose clocks go there."""
        ev = self.part.trace.events
        for q, buf in enumerate(incoming):
            asked = np.frombuffer(buf, dtype=REQUEST)
            if not len(asked):
                continue
            events = own_events_at(ev, asked["location"], asked["position"])
            self._core.export(q, events, np.ascontiguousarray(asked["ticket"]))

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
        """The stamps of the own events asked for (_core.VectorClocks)."""
        return self._core.finish()


def own_events_at(ev, location: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The ids of own events given by (location, position on it): an own
    location holds every event, so its position is its index there."""
    out = np.empty(len(location), dtype=np.int64)
    location = np.asarray(location)
    for l in np.unique(location).tolist():
        sel = np.nonzero(location == l)[0]
        out[sel] = ev.of_location(int(l))[np.asarray(position)[sel]]
    return out


def replay(part: Part, stamped: np.ndarray, threads: Optional[int] = None,
           progress=None):
    """Collective: the stamps of `stamped` (own events of this part, sorted) in
    the whole trace's happened-before order, the parts of part.exchange each
    running the steps of ClockReplay.  Returns (_core.VectorClocks, ReplayStats)."""
    import time

    ex = part.exchange
    t0 = time.perf_counter()
    stats = ReplayStats()
    error, rp = None, None
    try:
        rp = ClockReplay(part, stamped, threads=threads, progress=progress)
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
        except Exception as exc:
            error, outgoing = exc, [b""] * ex.size
        incoming = ex.alltoall_bytes(outgoing)
        stats.rounds += 1
        sent = sum(len(b) for b in outgoing)
        stats.bytes_sent += sent
        stats.bytes_received += sum(len(b) for b in incoming)
        try:
            if error is None:
                rp.receive(incoming)
        except Exception as exc:
            error = exc
        unfinished = rp.unfinished() if error is None else 0
        total = ex.allreduce_sum(np.array([sent, unfinished, error is not None], np.int64))
        if total[2]:
            ex.agree(error)
        if total[0]:
            continue
        if not total[1]:
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
        clocks = rp.finish()
    except Exception as exc:
        error, clocks = exc, None
    ex.agree(error)
    stats.cycles_broken = int(ex.allreduce_sum(np.array([stats.cycles_broken], np.int64))[0])
    stats.seconds = time.perf_counter() - t0
    return clocks, stats


def stamps_of(part: Part, ids: np.ndarray, threads: Optional[int] = None, progress=None):
    """Collective: the stamps of any events this part holds (own events and
    ghosts: a ghost's stamp comes from its owner).  Returns (events ids, their
    location, position in the whole trace, stamps (n, locations) uint32,
    ReplayStats)."""
    ev = part.trace.events
    ex = part.exchange
    ids = np.unique(np.asarray(ids, dtype=np.int64))
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
    stamped = np.unique(np.concatenate([ids[own]] + asked)) if len(ids) or any(
        len(a) for a in asked) else np.empty(0, np.int64)
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


__all__ = ["ClockReplay", "ReplayStats", "REQUEST", "replay", "stamps_of", "own_events_at"]
