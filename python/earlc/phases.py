"""The repeated phases of a run: loop iterations, found on one location.

Most parallel programs repeat one phase (a time step, a solver iteration) many times;
comparing the iterations shows where a run slows down.  pipit finds them with a
matrix profile (detect_pattern); earlc reads them from the structure of the calls:

- given a region (`region="iteration"`), an iteration is each instance of it on the
  location (instances nested in another instance of the same region are part of
  that one);
- otherwise earlc looks among the location's outermost calls for the period p (1 to
  max_period calls) whose repetition covers the most time: the longest stretch where
  every call has the same region as the call p places later, repeated at least
  twice.  When no repetition covers half of their time and one call takes at least
  half of it (`main`, a solver function), it looks among the calls inside that one,
  and so on down.  With p = 1 each iteration is one call (an `iteration` function);
  with p > 1 it is a group of calls (`compute`, `halo_exchange`, `MPI_Allreduce`,
  ...).

    it = trace.detect_iterations()          # or region="iteration", location=3
    it.to_dataframe()                       # one row per iteration: start, end, duration
    it.events(k)                            # the event ids of iteration k on the location
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .events import KINDS


class Iterations:
    """Iterations found on one location: `start`, `end` (ticks, int64 arrays),
    `first_event` and `last_event` (event ids: the first ENTER and the last LEAVE of
    each), `phase` (the region names of one iteration), `region` (the region asked
    for, or None), `location`."""

    def __init__(self, trace, location: int, phase: List[str], first: np.ndarray,
                 last: np.ndarray, region: Optional[str] = None):
        self.trace = trace
        self.location = int(location)
        self.phase = list(phase)
        self.region = region
        self.first_event = np.asarray(first, dtype=np.int64)
        self.last_event = np.asarray(last, dtype=np.int64)
        time = trace.events.time
        self.start = time[self.first_event].view(np.int64) if len(first) else \
            np.empty(0, np.int64)
        self.end = time[self.last_event].view(np.int64) if len(last) else np.empty(0, np.int64)

    def __len__(self) -> int:
        return len(self.first_event)

    @property
    def duration(self) -> np.ndarray:
        return self.end - self.start

    def events(self, k: int) -> np.ndarray:
        """The event ids of iteration k on its location."""
        ids = self.trace.events.of_location(self.location).astype(np.int64)
        lo = np.searchsorted(ids, self.first_event[k])
        hi = np.searchsorted(ids, self.last_event[k], side="right")
        return ids[lo:hi]

    def to_dataframe(self):
        """One row per iteration: iteration, start and end (seconds from the trace's
        start) with start_ticks and end_ticks, duration (seconds) with duration_ticks,
        first_event, last_event, events (on the location)."""
        import pandas as pd

        from .display import duration_columns, time_columns

        ids = self.trace.events.of_location(self.location).astype(np.int64)
        n_events = np.searchsorted(ids, self.last_event, side="right") - \
            np.searchsorted(ids, self.first_event)
        return pd.DataFrame({"iteration": np.arange(len(self)),
                             **time_columns(self.trace, self.start, "start"),
                             **time_columns(self.trace, self.end, "end"),
                             **duration_columns(self.trace, self.duration, "duration"),
                             "first_event": self.first_event, "last_event": self.last_event,
                             "events": n_events})

    def __repr__(self) -> str:
        return "<earlc.Iterations %d of [%s] on location %d>" % (
            len(self), ", ".join(self.phase), self.location)


def _longest_true_run(mask: np.ndarray):
    """(start, length) of the longest run of True (the first of equal ones)."""
    if not len(mask) or not mask.any():
        return 0, 0
    padded = np.concatenate(([0], mask.astype(np.int8), [0]))
    change = np.diff(padded)
    starts, ends = np.nonzero(change == 1)[0], np.nonzero(change == -1)[0]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - starts[k])


def detect_iterations(trace, region: Optional[str] = None, location: int = 0,
                      max_period: int = 64) -> Iterations:
    """The iterations of the run on `location` (see the module doc); an empty
    Iterations when nothing repeats.  Raises ValueError for an unknown location or
    region."""
    n_loc = len(trace.locations)
    if isinstance(location, bool) or not 0 <= int(location) < n_loc:
        raise ValueError("location %r does not exist (the trace has %d: 0..%d)"
                         % (location, n_loc, n_loc - 1))
    if max_period < 1:
        raise ValueError("max_period must be at least 1")
    loc = int(location)
    ev = trace.events
    st = trace.states
    ids = ev.of_location(loc).astype(np.int64)
    enters = ids[ev.kind[ids] == KINDS["ENTER"]]
    names = trace._region_name_array()
    spare = len(names) - 1

    def name_of(refs):
        refs = np.minimum(np.asarray(refs, dtype=np.int64), spare)
        return [n if n is not None else "?" for n in names[refs].tolist()]

    if region is not None:
        refs = np.array([r.id for r in trace.regions if r.name == region], dtype=np.int64)
        if not len(refs):
            raise ValueError("no region named %r in %s" % (region, trace.path))
        mine = enters[np.isin(ev.region_of(enters).astype(np.int64), refs)]
        # instances inside another instance of the same region belong to that one
        outer = []
        open_until = -1
        leave = st.gather("leaveptr", mine)
        for e, l in zip(mine.tolist(), leave.tolist()):
            if e > open_until:
                outer.append((e, l if l >= 0 else int(ids[-1])))
                open_until = l if l >= 0 else int(ids[-1])
        first = np.array([a for a, _ in outer], dtype=np.int64)
        last = np.array([b for _, b in outer], dtype=np.int64)
        return Iterations(trace, loc, [region], first, last, region)

    if not len(enters):
        return Iterations(trace, loc, [], np.empty(0, np.int64), np.empty(0, np.int64))
    parent = st.enterptr_of(enters)
    own = parent >= 0
    own[own] = ev.location[parent[own]] == loc
    parent = np.where(own, parent, -1)
    level = enters[~own]

    def spans(calls):
        leave = st.gather("leaveptr", calls)
        leave = np.where(leave >= 0, leave, ids[-1])
        return leave, ev.time[calls].view(np.int64), ev.time[leave].view(np.int64)

    # search the outermost calls; where nothing repeats over at least half of their
    # time and one call takes most of it (main, a solver function), the calls inside
    # that one
    found = None
    while len(level):
        leave, t_start, t_end = spans(level)
        span = max(int(t_end.max() - t_start.min()), 1)
        best = _periodic(ev.region_of(level).astype(np.int64), t_start, t_end, max_period)
        if best is not None and (found is None or best[0] > found[0]):
            found = best + (level, leave)
        if best is not None and 2 * best[0] >= span:
            break
        length = t_end - t_start
        k = int(np.argmax(length))
        children = enters[parent == level[k]]
        if len(children) < 2 or 2 * length[k] < span:
            break
        level = children
    if found is None:
        return Iterations(trace, loc, [], np.empty(0, np.int64), np.empty(0, np.int64))
    _, neg_p, i, count, level, leave = found
    p = -neg_p
    seq = ev.region_of(level).astype(np.int64)
    starts = i + np.arange(count) * p
    return Iterations(trace, loc, name_of(seq[i:i + p]), level[starts], leave[starts + p - 1])


def _periodic(seq: np.ndarray, t_start: np.ndarray, t_end: np.ndarray, max_period: int):
    """(covered ticks, -period, first call, repetitions) of the repeated stretch of
    calls that covers the most time (ties: the shorter period), None without one."""
    best = None
    for p in range(1, min(max_period, len(seq) // 2) + 1):
        i, run = _longest_true_run(seq[:-p] == seq[p:])
        count = (run + p) // p
        if run == 0 or count < 2:
            continue
        covered = int(t_end[i + count * p - 1] - t_start[i])
        if best is None or (covered, -p) > best[:2]:
            best = (covered, -p, i, count)
    return best


__all__ = ["Iterations", "detect_iterations"]
