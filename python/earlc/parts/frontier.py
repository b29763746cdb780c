"""The happened-before stamps of a trace in parts in three steps, whatever
the length of the chains of dependencies that cross parts (docs/parallel.md,
"The timestamps: three steps").

Why it works.  A vector clock is a join: the clock of an event is the
element-wise maximum of the unit vectors of everything that happened before it
or is it, so for an own event e of a part

    clock(e) = max(local(e), max over the ghosts g that reach e of clock(g)),

local(e) being what the part's replay gives with every ghost's clock zero.
Along a location clocks only grow, so of the ghosts of one location that reach
e only the latest counts: its *frontier* there.  A part replays its own events
once, before it knows any ghost clock, giving each ghost it waits for (a
*need*) a *symbolic* clock: zero except, in the ghost's own location's entry,
its rank among the needs of that location (1 for the first).  A ghost
location's entries of an own event's clock then name its frontier there, and
the own locations' entries are exact up to what came through other parts.

The events other parts wait for (*crossing* events: sends received elsewhere,
collective begins of instances with members elsewhere) are the needs of the
other parts, so their true clocks solve a system over the crossing events
alone: true(x) = max(base(x), true of x's frontier needs), base(x) being x's
symbolic clock with the ghost entries cleared.  Its dependencies are those of
the trace between crossing events, so without cycles it is solved in one
topological sweep (`solve`, where one process holds every part's summary: the
driver of parts in turn) or by the parts together, each holding its own
crossing events, in a few rounds (doubling.py: the MPI processes).  Then each part replays once more with the true
clocks of all its needs from the start: its stamps are the whole trace's.

A cycle (an inconsistent trace) shows as a part that cannot finish its
symbolic pass or a system with no topological order; the caller then falls
back to the replay in rounds, which breaks cycles as the whole trace's replay
does.

What each part sends (`summary`): its needs as (location, position in the
whole trace), and each crossing event's key with its symbolic clock
(12 + 4 x L bytes, L the trace's locations).  `solve` holds all of them;
doubling.solve holds only the own part's.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .. import _core
from .._core import Error
from .part import POSITION_BITS, Part

_HEADER = 4  # int64: needs, crossing events, local cycle, width


def need_ranks(location: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Each need's rank among the needs of its location by position, from 1."""
    n = len(location)
    ranks = np.zeros(n, dtype=np.uint32)
    if not n:
        return ranks
    order = np.lexsort((position, location))
    loc = location[order]
    first = np.searchsorted(loc, loc, side="left")
    ranks[order] = (np.arange(n) - first + 1).astype(np.uint32)
    return ranks


def clock_records(tickets: np.ndarray, clocks: np.ndarray) -> bytes:
    """Records for PartClocks.receive: a uint64 ticket then the clock."""
    width = clocks.shape[1] if clocks.ndim == 2 else 0
    rec = np.empty(len(tickets), dtype=[("ticket", "<u8"), ("clock", "<u4", (width,))])
    rec["ticket"] = tickets
    rec["clock"] = clocks
    return rec.tobytes()


def symbolic_pass(part: Part, threads: int) -> bytes:
    """This part's replay with symbolic ghost clocks: its summary for the
    solver (needs, crossing events with their symbolic clocks, whether its
    own events have a cycle)."""
    trace = part.trace
    ev = trace.events
    width = len(trace.locations)
    core = _core.PartClocks(trace.states._core, np.empty(0, np.int64), threads=threads)
    needs = np.frombuffer(core.needs(), dtype=np.int64)
    nloc = ev.location[needs].astype(np.int32)
    npos = part.positions(needs) if len(needs) else np.empty(0, np.int64)
    symbolic = np.zeros((len(needs), width), dtype=np.uint32)
    symbolic[np.arange(len(needs)), nloc] = need_ranks(nloc, npos)
    core.export_crossing()
    if len(needs):
        core.receive(clock_records(np.arange(len(needs), dtype=np.uint64), symbolic))
    del symbolic
    core.run()
    cycle = core.unfinished() > 0
    _, records = core.take(1)
    rec = np.frombuffer(records, dtype=[("ticket", "<u8"), ("clock", "<u4", (width,))])
    crossing = rec["ticket"].astype(np.int64)
    xloc = ev.location[crossing].astype(np.int32)
    xpos = part.positions(crossing) if len(crossing) else np.empty(0, np.int64)
    header = np.array([len(needs), len(crossing), cycle, width], dtype=np.int64)
    return b"".join([header.tobytes(), nloc.tobytes(), npos.astype(np.int64).tobytes(),
                     xloc.tobytes(), xpos.astype(np.int64).tobytes(),
                     np.ascontiguousarray(rec["clock"]).tobytes()])


def _unpack(buf) -> dict:
    head = np.frombuffer(buf, dtype=np.int64, count=_HEADER)
    n, m, cycle, width = (int(x) for x in head)
    out, at = {"cycle": bool(cycle), "width": width}, _HEADER * 8
    for name, dtype, count in (("nloc", np.int32, n), ("npos", np.int64, n),
                               ("xloc", np.int32, m), ("xpos", np.int64, m),
                               ("clock", np.uint32, m * width)):
        out[name] = np.frombuffer(buf, dtype=dtype, count=count, offset=at)
        at += count * np.dtype(dtype).itemsize
    out["clock"] = out["clock"].reshape(m, width)
    return out


class NoOrder(Error, RuntimeError):
    """The crossing events have no order consistent with happened-before (a
    cycle), or a part waits for an event no part exported: the replay in rounds
    must do it."""


def solve(summaries: list, part_of: np.ndarray) -> List[bytes]:
    """The true clocks of every part's needs, from every part's summary
    (summaries[p] of part p; the list is emptied, so that the summaries can
    go as soon as their clocks are copied): for each part, records for
    PartClocks.receive in its tickets' order.  Raises NoOrder."""
    parts = [_unpack(s) for s in summaries]
    summaries.clear()
    if any(p["cycle"] for p in parts):
        raise NoOrder("a part's own events have a cycle")
    width = parts[0]["width"]
    # the nodes: every crossing event, in the parts' order, found by its key
    start = np.cumsum([0] + [len(p["xloc"]) for p in parts])
    keys = np.concatenate([(p["xloc"].astype(np.int64) << POSITION_BITS) | p["xpos"]
                           for p in parts])
    base = np.empty((int(start[-1]), width), dtype=np.uint32)
    for q, p in enumerate(parts):
        base[start[q]:start[q + 1]] = p["clock"]
        p["nloc"], p["npos"] = p["nloc"].copy(), p["npos"].copy()
        del p["clock"], p["xloc"], p["xpos"]  # the summaries themselves can go now
    order = np.argsort(keys, kind="stable")
    keys = keys[order]

    def nodes(loc, pos):
        k = (loc.astype(np.int64) << POSITION_BITS) | pos
        at = np.searchsorted(keys, k)
        if len(k) and (at.max() >= len(keys) or not np.array_equal(keys[at], k)):
            raise NoOrder("a part waits for an event no part exported")
        return order[at]

    src, dst = [], []
    need_nodes = []
    for q, p in enumerate(parts):
        at = nodes(p["nloc"], p["npos"])
        need_nodes.append(at)
        # the needs of q by (location, rank): rank r of location m is
        # by_rank[first[m] + r - 1]
        srt = np.lexsort((p["npos"], p["nloc"]))
        by_rank = at[srt]
        first = np.searchsorted(p["nloc"][srt], np.arange(width))
        count = np.searchsorted(p["nloc"][srt], np.arange(width), side="right") - first
        ghost = np.nonzero(part_of != q)[0]
        sym = base[start[q]:start[q + 1]][:, ghost]
        i, j = np.nonzero(sym)
        r = sym[i, j].astype(np.int64)
        m = ghost[j]
        del sym
        if len(r) and (r > count[m]).any():
            raise ValueError("a crossing event's clock names a need part %d does not have" % q)
        src.append(by_rank[first[m] + r - 1])
        dst.append(start[q] + i)
        base[start[q]:start[q + 1], ghost] = 0
    del keys, order
    src = np.concatenate(src) if src else np.empty(0, np.int64)
    dst = np.concatenate(dst) if dst else np.empty(0, np.int64)
    true = _sweep(base, src, dst)
    return [clock_records(np.arange(len(at), dtype=np.uint64), true[at]) for at in need_nodes]


def _sweep(base: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """true[x] = max(base[x], true[d] for each edge d -> x), in a topological
    order (earl_hb_frontier_solve); NoOrder when there is none."""
    true = base  # in place
    if not len(true):
        return true
    solved = _core.frontier_solve(true, true.shape[1], np.ascontiguousarray(src, np.int64),
                                  np.ascontiguousarray(dst, np.int64))
    if solved < len(true):
        raise NoOrder("the crossing events have a cycle")
    return true


def final_pass(part: Part, stamped: np.ndarray, threads: int, clocks: bytes, progress=None,
               alone: bool = False):
    """The part's replay with the true clocks of all its needs: its stamps
    (_core.VectorClocks).  alone: the part is the whole trace, whose cycles
    are broken as the whole trace's replay breaks them (at the waiting event
    that comes first)."""
    core = _core.PartClocks(part.trace.states._core, np.ascontiguousarray(stamped, np.int64),
                            threads=threads, progress=progress)
    if len(clocks):
        core.receive(clocks)
    core.run()
    while alone and core.unfinished():
        core.force(core.waiting())
        core.run()
    if core.unfinished():
        raise NoOrder("a part waits with every clock it needs received")
    return core.finish()


__all__ = ["need_ranks", "symbolic_pass", "solve", "final_pass", "NoOrder", "clock_records"]
