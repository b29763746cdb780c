"""A time window of a trace as the pieces a timeline draws: region instances per
location (clipped to the window), messages from send to receive, and the wait
states the analysis found.  The Perfetto export and the timeline picture both read
a window through here, so they agree on what is in it.

Times are integer ticks (absolute, as in `trace.events.time`); windows are given
as ticks by the functions here and as seconds from the trace start by users
(`window_ticks` converts).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .events import KINDS
from .analysis import regions as rc
from .analysis.ranking import is_inefficiency
from .states import open_regions

#: what a timeline colours a region by
DISPLAY_KINDS = ("computation", "mpi_p2p", "mpi_collective", "mpi_other", "openmp", "other")
_DISPLAY_OF_CLASS = {
    "user": "computation", "mpi_init_finalize": "mpi_other", "mpi_barrier": "mpi_collective",
    "mpi_collective": "mpi_collective", "mpi_p2p": "mpi_p2p", "mpi_other": "mpi_other",
    "other_paradigm": "other"}


def display_kind(region_class: str) -> str:
    """The kind a timeline colours a region class (analysis.regions.CLASSES) by;
    classes added later fall in by their prefix (mpi_..., omp_...)."""
    kind = _DISPLAY_OF_CLASS.get(region_class)
    if kind is not None:
        return kind
    if region_class.startswith("mpi"):
        return "mpi_other"
    if region_class.startswith("omp"):
        return "openmp"
    return "other"


#: properties whose waiting sits at the end of the call (the time after the first
#: process left), all others wait from the start of the call, except:
WAIT_AT_END = {"barrier_completion", "nxn_completion"}
#: properties whose waiting lies before the call they are charged to: the fork
#: part of thread management, from the team's fork to the thread's enter of the
#: parallel region (on a worker thread, time outside its own regions)
WAIT_BEFORE = {"omp_fork"}
#: properties whose waiting lies around the call: the column holding the part
#: before it (thread management: the fork part before the parallel region, the
#: join part after it)
WAIT_AROUND = {"omp_management": "fork_part"}


def display_kinds(trace) -> np.ndarray:
    """Index into DISPLAY_KINDS per region ref (last slot: no region)."""
    n = max((r.id for r in trace.regions), default=-1) + 2
    out = np.full(n, DISPLAY_KINDS.index("other"), dtype=np.int8)
    for r in trace.regions:
        out[r.id] = DISPLAY_KINDS.index(display_kind(rc.classify(r)))
    return out


def window_ticks(trace, start: Optional[float] = None, end: Optional[float] = None):
    """(first, last) absolute ticks of a window given in seconds from the trace start
    (None: the trace's own start or end).  A bound outside the trace (before its start,
    after its end) and an end before the start are ValueErrors whose message says
    what the trace spans.  start == end is a valid window here (what is open at that
    instant); the command line refuses it as showing nothing (cli._window_options)."""
    t0, span, res = trace.start_time, trace.duration_ticks, trace.timer_resolution
    for what, value in (("starts", start), ("ends", end)):
        if value is None:
            continue
        ticks = float(value) * res  # compared as floats: 1e300 s must not overflow
        if not math.isfinite(ticks) or ticks < 0 or ticks > span + 0.5:
            raise ValueError("the window %s at %.9g s, outside the trace: it spans 0 to %.9g s "
                             "from its start" % (what, value, trace.duration))
    first = t0 if start is None else t0 + int(round(start * res))
    last = t0 + span if end is None else t0 + int(round(end * res))
    if last < first:
        raise ValueError("the window ends (%.9g s) before it starts (%.9g s)"
                         % ((last - t0) / res, (first - t0) / res))
    return first, last


def selected_locations(trace, locations: Optional[Sequence[int]]) -> np.ndarray:
    """Location indices as a sorted array (all when None); unknown ones are an error."""
    n = len(trace.locations)
    if locations is None:
        return np.arange(n)
    sel = np.unique(np.asarray([int(getattr(l, "index", l)) for l in locations], dtype=np.int64))
    if len(sel) and (sel[0] < 0 or sel[-1] >= n):
        raise ValueError("location %d does not exist (the trace has %d: 0..%d)"
                         % (sel[0] if sel[0] < 0 else sel[-1], n, n - 1))
    return sel


@dataclass
class Slices:
    """Region instances overlapping a window, one row each: the ENTER event, its
    location and region ref, start and end in ticks (clipped to the window), the
    nesting depth on its location (0: outermost) and the row of the enclosing
    instance on the same location (-1 for none)."""

    enter: np.ndarray
    location: np.ndarray
    region: np.ndarray
    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    parent: np.ndarray

    def __len__(self) -> int:
        return len(self.enter)


@dataclass
class Messages:
    """Messages whose send and receive both lie in the window and on selected
    locations: send and receive event ids, their locations and times, bytes."""

    send: np.ndarray
    recv: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    send_time: np.ndarray
    recv_time: np.ndarray
    bytes: np.ndarray

    def __len__(self) -> int:
        return len(self.send)


@dataclass
class WaitStates:
    """Wait states in the window: the property, the waiting call's ENTER (or the
    event charged), location, start and end in ticks, severity in ticks."""

    prop: np.ndarray  # index into `names`
    names: list
    titles: list
    where: np.ndarray
    location: np.ndarray
    start: np.ndarray
    end: np.ndarray
    severity: np.ndarray
    #: the row of each in its property's instances (report.instances(name))
    occurrence: np.ndarray = None

    def __len__(self) -> int:
        return len(self.where)


class Window:
    """Region instances, messages and (given a report) wait states of the events
    between first and last (absolute ticks, inclusive) on the selected locations."""

    def __init__(self, trace, first: int, last: int, locations: Optional[Sequence[int]] = None):
        self.trace = trace
        self.first, self.last = int(first), int(last)
        self.locations = selected_locations(trace, locations)
        time = trace.events.time
        self.lo = int(np.searchsorted(time, np.uint64(self.first), side="left"))
        self.hi = int(np.searchsorted(time, np.uint64(self.last), side="right"))
        self._selected = np.zeros(len(trace.locations), dtype=bool)
        self._selected[self.locations] = True

    def _in_window(self, kinds) -> np.ndarray:
        """Event ids of these kinds in the window on selected locations."""
        ev = self.trace.events
        k = ev.kind[self.lo:self.hi]
        mask = np.zeros(len(k), dtype=bool)
        for name in kinds:
            mask |= k == KINDS[name]
        mask &= self._selected[ev.location[self.lo:self.hi]]
        return np.nonzero(mask)[0] + self.lo

    def slices(self) -> Slices:
        trace = self.trace
        ev = trace.events
        st = trace.states
        # regions open at the start come before the window's own ENTERs (which are
        # ascending and distinct already): no sort of the big part
        open_at_start = open_regions(trace, self.locations.tolist(), self.lo)[0]
        enter = np.concatenate((np.unique(open_at_start),
                                self._in_window(["ENTER"])))
        time = ev.time.view(np.int64)
        start = np.maximum(time[enter], self.first)
        # an instance ends at its LEAVE when that lies in the window (the window's
        # LEAVEs point back to their own ENTER), else past the window's end: no
        # pointer array over the whole trace, no walk to a far LEAVE
        leaves = self._in_window(["LEAVE"])
        opened = st.enterptr_of(leaves)
        pos = np.searchsorted(enter, opened)
        ok = (opened >= 0) & (pos < len(enter))
        ok[ok] &= enter[pos[ok]] == opened[ok]
        end = np.full(len(enter), self.last, dtype=np.int64)
        end[pos[ok]] = time[leaves[ok]]
        end = np.minimum(end, self.last)
        keep = end >= start
        keep &= ~((start == self.first) & (end == self.first) & (time[enter] < self.first))
        enter, start, end = enter[keep], start[keep], end[keep]
        location = ev.location[enter].astype(np.int64)
        # depth: how many of the selected instances enclose each one on its location
        parent = st.enterptr_of(enter)
        pos = np.searchsorted(enter, parent)
        pos_ok = (parent >= 0) & (pos < len(enter))
        pos_ok[pos_ok] &= enter[pos[pos_ok]] == parent[pos_ok]
        up = np.full(len(enter), -1, dtype=np.int64)
        up[pos_ok] = pos[pos_ok]
        linked = up >= 0
        linked[linked] = location[up[linked]] == location[linked]
        up[~linked] = -1  # a worker thread's outermost region hangs off its master
        depth = np.zeros(len(enter), dtype=np.int64)
        cur = up.copy()
        while (cur >= 0).any():
            depth += cur >= 0
            cur = np.where(cur >= 0, up[np.maximum(cur, 0)], -1)
        region = ev.region_of(enter).astype(np.int64)
        return Slices(enter, location, region, start, end, depth, up)

    def messages(self) -> Messages:
        ev = self.trace.events
        sends = self._in_window(["MPI_SEND", "MPI_ISEND"])
        recv = self.trace.states.gather("recvptr", sends)
        ok = recv >= 0
        sends, recv = sends[ok], recv[ok]
        ok = (recv < self.hi) & self._selected[ev.location[recv]]
        sends, recv = sends[ok], recv[ok]
        time = ev.time.view(np.int64)
        return Messages(sends, recv, ev.location[sends].astype(np.int64),
                        ev.location[recv].astype(np.int64), time[sends], time[recv],
                        ev.messages.bytes[ev.ref_of(sends)].astype(np.int64))

    def wait_states(self, report=None) -> WaitStates:
        """Every occurrence of a detected time property whose waiting call overlaps
        the window, on a selected location: the waiting span inside that call,
        cut at the window's edges (spans left empty are dropped).  The occurrences
        come from report (a whole analysis) or, without one, from the built-in
        properties evaluated on the window alone (analysis.window: the same
        occurrences, found at the cost of the window)."""
        if report is None:
            from .analysis.window import analyze_window

            found = analyze_window(self.trace, self.lo, self.hi, self.locations)
        else:
            found = [(p, report.instances(p.name)) for p in report.properties
                     if is_inefficiency(p) and report.total(p.name) > 0]
        names, titles, parts = [], [], []
        for p, inst in found:
            if inst is None or not len(inst):
                continue
            before = None
            if p.name in WAIT_AROUND and WAIT_AROUND[p.name] in inst:
                before = inst[WAIT_AROUND[p.name]]
            span = self.waiting_spans(p.name, inst.where, inst.severity, before)
            if span is None:
                continue
            parts.append((len(names),) + span)
            names.append(p.name)
            titles.append(p.title)
        if not parts:
            z = np.empty(0, dtype=np.int64)
            return WaitStates(z, names, titles, z, z, z, z, z, z)
        return WaitStates(np.concatenate([np.full(len(x[1]), x[0]) for x in parts]), names, titles,
                          *(np.concatenate([x[k] for x in parts]) for k in range(1, 7)))

    def waiting_calls(self, where: np.ndarray):
        """For occurrences charged to the events `where`: (call: the waiting call's
        ENTER or, outside every call, the event itself; its start and end in ticks,
        the end -1 for a call never left; which of them overlap the window on a
        selected location)."""
        ev = self.trace.events
        st = self.trace.states
        time = ev.time.view(np.int64)
        where = np.asarray(where, dtype=np.int64)
        call = np.where(ev.kind[where] == KINDS["ENTER"], where, st.enterptr_of(where))
        # outside every call of its own location (a worker thread's frame hangs off
        # its master's): the event itself
        loc = ev.location[where]
        own = call >= 0
        own[own] = ev.location[call[own]] == loc[own]
        call = np.where(own, call, where)
        begin = time[call]
        # only the calls entered by the window's end can reach into it
        end = np.full(len(call), -1, dtype=np.int64)
        maybe = np.nonzero(begin <= self.last)[0]
        leave = st.gather("leaveptr", call[maybe])
        end[maybe] = np.where(leave >= 0, time[np.maximum(leave, 0)], -1)
        overlaps = (begin <= self.last) & ((end >= self.first) | (end < 0))
        overlaps &= self._selected[loc]
        return call, begin, end, overlaps

    def waiting_spans(self, name: str, where: np.ndarray, severity: np.ndarray,
                      before: Optional[np.ndarray] = None):
        """(call, location, start, end, severity, occurrence) of the occurrences of
        property `name` drawn in the window (occurrence: the position in `where`),
        None when none is.  Most wait inside the call
        they are charged to (from its start, or up to its end: WAIT_AT_END); some
        before it (WAIT_BEFORE); with `before` (ticks per occurrence), that part
        lies before the call and the rest after it (WAIT_AROUND): such an
        occurrence gives two spans."""
        got = [spans for _, spans in self.waiting_span_parts(name, where, severity, before)]
        if not got:
            return None
        if len(got) == 1:
            return got[0]
        return tuple(np.concatenate([g[k] for g in got]) for k in range(6))

    def waiting_span_parts(self, name: str, where: np.ndarray, severity: np.ndarray,
                           before: Optional[np.ndarray] = None):
        """waiting_spans in its parts: [(0, spans)] or, with `before`, the spans
        before the calls (0) and after them (1), those that are drawn."""
        if before is not None:
            before = np.minimum(np.asarray(before, dtype=np.int64), severity)
            got = [(0, self._spans("before", where, before)),
                   (1, self._spans("after", where, severity - before))]
        else:
            mode = "end" if name in WAIT_AT_END else "before" if name in WAIT_BEFORE else "start"
            got = [(0, self._spans(mode, where, severity))]
        return [(k, spans) for k, spans in got if spans is not None]

    def _spans(self, mode: str, where: np.ndarray, severity: np.ndarray):
        # the occurrences whose call overlaps the window (as the window's own
        # analysis finds them), their waiting cut at the window's edges
        call, begin, end, overlaps = self.waiting_calls(where)
        finish = np.where(end >= 0, end, begin + severity)
        if mode == "before":
            s, e = begin - severity, begin
        elif mode == "after":
            s, e = finish, finish + severity
        elif mode == "end":
            s, e = np.maximum(finish - severity, begin), finish
        else:
            s, e = begin, np.minimum(begin + severity, finish)
        keep = np.nonzero(overlaps & (severity > 0))[0]
        if not len(keep):
            return None
        call, s, e, sev = call[keep], s[keep], e[keep], severity[keep]
        s, e = np.maximum(s, self.first), np.minimum(e, self.last)
        ok = e > s
        if not ok.any():
            return None
        loc = self.trace.events.location[call[ok]].astype(np.int64)
        return call[ok], loc, s[ok], e[ok], sev[ok], keep[ok]


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def parse_seconds(text: str) -> float:
    """'1.5', '1.5s', '20ms', '300us', '40ns' -> seconds (for --from / --to)."""
    t = text.strip().lower()
    for unit in ("ms", "us", "ns", "s"):
        if t.endswith(unit):
            number, factor = t[:-len(unit)], _UNITS[unit]
            break
    else:
        number, factor = t, 1.0
    try:
        value = float(number) * factor
    except ValueError:
        raise ValueError("%r is no time: give seconds from the trace start, e.g. 0.5, 20ms, "
                         "300us" % text) from None
    if not math.isfinite(value) or value < 0:
        raise ValueError("%r is no time from the trace start (it must be >= 0)" % text)
    return value


def parse_locations(text: str) -> list:
    """'0,2-4' -> [0, 2, 3, 4] (location indices, as `earlc info` lists them)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError("%r is no list of location indices (e.g. 0,2-5)" % text) from None
        if b < a:
            raise ValueError("location range %r is empty" % part)
        out.extend(range(a, b + 1))
    if not out:
        raise ValueError("no location given in %r" % text)
    return out
