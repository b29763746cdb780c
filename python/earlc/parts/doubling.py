"""The crossing events' true clocks solved by the processes together, each
holding only its own crossing events (docs/parallel.md, "The timestamps: three
steps", step 2): the solve of the stamps in parts on MPI processes, between
the symbolic pass and the final pass of frontier.py.

The system is frontier.py's: the true clock of a crossing event x is the
maximum of its symbolic clock's own entries and of the true clocks of the
crossing events that happened before it.  Solving it by passing clocks along
its edges would take one exchange per part the longest chain of dependencies
crosses (28,411 on the halo exchange of docs/parallel.md).  Instead each part
doubles the reach of its crossing events' clocks in every round:

  A clock C(x) <= true(x) names, in each location l, an event that happened
  before x: the one at position C(x)[l] - 1 (an entry counts the events of l
  before x or x itself), hence every event of l before it, in particular y_l,
  the latest crossing event of l at or before it.  So

      C'(x) = max(C(x), C(y_l) for every location l)

  is still at most true(x).  Start from the symbolic clock, its foreign
  entries turned from the need's rank into its position + 1: then x sees the
  crossing events one link of the system before it; if after k rounds x sees
  every crossing event 2^k links before it, after k + 1 rounds it sees those
  2^(k+1) links before it (through the one halfway, which it sees and which
  sees them), and one more round takes in their clocks.  Along a location
  clocks only grow (in every round, by induction), so the latest crossing
  event y_l stands for every earlier one.

A round: each part asks, for each location l, the crossing events' distinct
entries C(x)[l] (a *query*: location, value) of l's owner, and the true
positions + 1 of its needs too; the owner answers each query with the clock of
y_l (each distinct clock once).  The rounds end when no clock grew on any part
(the summed status of the round): about log2 of the longest chain plus one,
and one on a trace whose needs' frontiers already say everything (the halo
exchange).  The needs' clocks of that last round are their true clocks.

A cycle across parts (an inconsistent trace) shows as a crossing event y that
x sees and that has seen x (C(y)[loc x] > pos(x)): every part raises NoOrder
alike, and the caller falls back to the replay in rounds, as for a cycle in a
part's own events (the symbolic pass's flag) or a need no part exported.

Memory of a part: its own crossing events' clocks (4 x L bytes each, L the
trace's locations) twice, the queries it is asked (8 bytes each) and the
distinct clocks it receives in a round (at most one per query it asked); no
part holds the whole trace's crossing events.  Rounds: about log2 of the
longest chain; each is two Alltoallv and one Allreduce.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .. import _core
from .frontier import NoOrder, _unpack, clock_records
from .part import POSITION_BITS

#: a query: a location and a clock entry of it (position + 1 of an event there)
QUERY = np.dtype([("location", "<i4"), ("value", "<u4")])

_CHANGED, _CYCLE, _LOCAL_CYCLE, _MISSING, _FAILED = range(5)  # the status summed each round


class Crossing:
    """One part's crossing events and needs, from its symbolic summary
    (frontier.symbolic_pass): `clock` (crossing events x locations, uint32)
    starts as the symbolic clocks with every foreign entry turned from a
    need's rank into that need's position + 1."""

    def __init__(self, summary: bytes, part_of: np.ndarray, rank: int, parts: int):
        s = _unpack(summary)
        self.parts = parts
        self.width = s["width"]
        self.cycle = s["cycle"]
        self.xloc = s["xloc"].astype(np.int64)
        self.xpos = s["xpos"].astype(np.int64)
        self.nloc = s["nloc"].astype(np.int64)
        self.npos = s["npos"].astype(np.int64)
        self.clock = np.array(s["clock"], dtype=np.uint32)  # a copy: summary can go
        self.part_of = np.asarray(part_of, dtype=np.int64)
        self.rank = rank
        # the needs of each location by position: rank r of location m is
        # need_pos[need_first[m] + r - 1]
        order = np.lexsort((self.npos, self.nloc))
        need_loc, need_pos = self.nloc[order], self.npos[order]
        need_first = np.searchsorted(need_loc, np.arange(self.width))
        need_count = np.searchsorted(need_loc, np.arange(self.width), side="right") - need_first
        for m in np.nonzero(self.part_of != rank)[0].tolist():
            r = self.clock[:, m].astype(np.int64)
            at = np.nonzero(r)[0]
            if len(at) and r[at].max() > need_count[m]:
                raise ValueError("a crossing event's clock names a need of location %d "
                                 "this part does not have" % m)
            self.clock[at, m] = (need_pos[need_first[m] + r[at] - 1] + 1).astype(np.uint32)
        # the own crossing events in the order of (location, position): an
        # answer is a search there, and along a location clocks only grow
        keys = (self.xloc << POSITION_BITS) | self.xpos
        order = np.argsort(keys, kind="stable")
        if not np.array_equal(order, np.arange(len(order))):
            self.keys, self.xloc, self.xpos = keys[order], self.xloc[order], self.xpos[order]
            self.clock = self.clock[order]
        else:
            self.keys = keys
        self.run = np.ones(len(keys), dtype=bool)  # the first crossing event of its location
        self.run[1:] = self.xloc[1:] != self.xloc[:-1]

    # -- the queries of a round ----------------------------------------------------------
    def queries(self) -> Tuple[Dict[int, np.ndarray], List[bytes]]:
        """The distinct values this part asks for each location (its crossing
        events' entries there, but their own location's, and its needs'
        positions + 1), and the QUERY records for each part, by location then
        value."""
        values = {}
        for l in range(self.width):
            column = self.clock[:, l]
            # of the equal entries of neighbours on a location, the first
            new = self.run.copy()
            new[1:] |= column[1:] != column[:-1]
            v = column[new & (column > 0) & (self.xloc != l)]
            need = (self.npos[self.nloc == l] + 1).astype(np.uint32)
            if len(v) or len(need):
                values[l] = _distinct(np.concatenate([v, need]))
        out = [[] for _ in range(self.parts)]
        for l, v in values.items():
            rec = np.empty(len(v), dtype=QUERY)
            rec["location"], rec["value"] = l, v
            out[int(self.part_of[l])].append(rec)
        return values, [np.concatenate(r).tobytes() if r else b"" for r in out]

    def answer(self, buf) -> bytes:
        """The answer to another part's queries: for each query the index of
        the clock of the latest own crossing event of its location at or
        before its value (-1: none), then those clocks, each once."""
        asked = np.frombuffer(buf, dtype=QUERY)
        if not len(asked):
            return b""
        loc = asked["location"].astype(np.int64)
        if (self.part_of[loc] != self.rank).any():
            raise ValueError("a query names a location this part does not own")
        key = (loc << POSITION_BITS) | (asked["value"].astype(np.int64) - 1)
        at = np.searchsorted(self.keys, key, side="right") - 1
        ok = at >= 0
        ok[ok] = (self.keys[at[ok]] >> POSITION_BITS) == loc[ok]
        index = np.full(len(asked), -1, dtype=np.int32)
        rows, inverse = np.unique(at[ok], return_inverse=True)
        index[ok] = inverse.reshape(-1).astype(np.int32)
        head = np.array([len(rows)], dtype=np.int64)
        return b"".join([head.tobytes(), index.tobytes(), self.clock[rows].tobytes()])

    # -- what the answers give -------------------------------------------------------------
    def fold(self, values: Dict[int, np.ndarray], replies: List[bytes]):
        """The round's new clocks from the answers (replies[q] from part q to
        this part's queries): (new clocks, how many grew, whether a crossing
        event sees one that has seen it, the needs' rows: clocks of the needs
        in their order, or None when one of them was not found)."""
        width = self.width
        index, table = {}, {}
        for q, buf in enumerate(replies):
            if not len(buf):
                continue
            count = int(np.frombuffer(buf, dtype=np.int64, count=1)[0])
            k = (len(buf) - 8 - count * 4 * width) // 4
            index[q] = np.frombuffer(buf, dtype=np.int32, count=k, offset=8)
            table[q] = np.frombuffer(buf, dtype=np.uint32, offset=8 + 4 * k).reshape(count, width)
        first = {}  # each location's first query in its owner's list
        at = [0] * self.parts
        for l, v in values.items():
            q = int(self.part_of[l])
            first[l] = at[q]
            at[q] += len(v)
        new = self.clock.copy()
        cycle = False
        xloc = self.xloc.astype(np.int32)
        for l, v in values.items():
            q = int(self.part_of[l])
            column = np.ascontiguousarray(self.clock[:, l])
            j = np.minimum(np.searchsorted(v, column), len(v) - 1)
            row_of = index[q][first[l] + j].astype(np.int64)
            row_of[(column == 0) | (self.xloc == l)] = -1
            # the row the previous crossing event of the location took: the
            # running maximum below brings it
            row_of[1:][~self.run[1:] & (row_of[1:] == row_of[:-1])] = -1
            # a crossing event that x sees and that saw x or later: a cycle
            cycle |= _core.frontier_fold(new, width, table[q], row_of, xloc, self.xpos)
        # along a location each crossing event happened before the next
        starts = np.append(np.nonzero(self.run)[0], len(new))
        for a, b in zip(starts[:-1].tolist(), starts[1:].tolist()):
            np.maximum.accumulate(new[a:b], axis=0, out=new[a:b])
        grew = int((new != self.clock).any(axis=1).sum())
        needs = np.empty((len(self.nloc), width), dtype=np.uint32)
        for l in np.unique(self.nloc).tolist():
            q = int(self.part_of[l])
            sel = np.nonzero(self.nloc == l)[0]
            value = self.npos[sel] + 1
            idx = index[q][first[l] + np.searchsorted(values[l], value)]
            if (idx < 0).any():
                return new, grew, cycle, None
            rows = table[q][idx]  # the zero row is never one of them
            if not np.array_equal(rows[:, l].astype(np.int64), value):
                return new, grew, cycle, None  # not a crossing event of its owner
            needs[sel] = rows
        return new, grew, cycle, needs


def _distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of a, ascending (by a sort: np.unique's hash is
    slower on these)."""
    a = np.sort(a)
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


def solve(exchange, summary: list, part_of: np.ndarray, stats) -> bytes:
    """Collective: the true clocks of this part's needs, as records for
    PartClocks.receive in its tickets' order, from its summary
    (frontier.symbolic_pass; the one-element list is emptied, so that the
    summary goes as soon as it is read).  Raises NoOrder on every part alike when the
    crossing events have a cycle or a need is no part's crossing event.
    stats (a ReplayStats) counts the exchanges and the bytes from other parts;
    stats.extra gets "solve_rounds" and "solve_held" (the most bytes received
    from other parts in one round)."""
    ex = exchange
    error, crossing = None, None
    try:
        crossing = Crossing(summary.pop(), part_of, ex.rank, ex.size)
    except Exception as exc:  # every part learns of it
        error = exc
    ex.agree(error)
    rounds, held = 0, 0
    while True:
        rounds += 1
        status = np.zeros(5, dtype=np.int64)
        values, asks = {}, [b""] * ex.size
        try:
            values, asks = crossing.queries()
        except Exception as exc:
            error = exc
        asked = ex.alltoall_bytes(asks)
        answers = [b""] * ex.size
        try:
            answers = [crossing.answer(b) for b in asked] if error is None else answers
        except Exception as exc:
            error = exc
        replies = ex.alltoall_bytes(answers)
        received = sum(len(b) for q, b in enumerate(asked) if q != ex.rank) + \
            sum(len(b) for q, b in enumerate(replies) if q != ex.rank)
        stats.rounds += 2
        stats.bytes_sent += sum(len(b) for q, b in enumerate(asks) if q != ex.rank) + \
            sum(len(b) for q, b in enumerate(answers) if q != ex.rank)
        stats.bytes_received += received
        held = max(held, received)
        del asked, answers, asks
        needs = None
        try:
            if error is None:
                new, grew, cycle, needs = crossing.fold(values, replies)
                status[_CHANGED], status[_CYCLE] = grew, cycle
                status[_LOCAL_CYCLE] = crossing.cycle
                status[_MISSING] = needs is None
                crossing.clock = new
        except Exception as exc:
            error = exc
        del replies
        status[_FAILED] = error is not None
        total = ex.allreduce_sum(status)
        if total[_FAILED]:
            ex.agree(error)
        if total[_LOCAL_CYCLE]:
            raise NoOrder("a part's own events have a cycle")
        if total[_CYCLE]:
            raise NoOrder("the crossing events have a cycle")
        if total[_MISSING]:
            raise NoOrder("a part waits for an event no part exported")
        if not total[_CHANGED]:
            break
    stats.extra["solve_rounds"] = rounds
    stats.extra["solve_held"] = held
    return clock_records(np.arange(len(needs), dtype=np.uint64), needs)


__all__ = ["Crossing", "QUERY", "solve"]
