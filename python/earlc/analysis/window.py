"""The wait states of a time window without analysing the whole trace.

A timeline of a window (the Perfetto export, the timeline picture) draws the
wait states whose waiting call overlaps the window.  The built-in properties
decide each occurrence from a few events: the receives inside the waiting call
and their sends, the members of one collective instance, the previous holder of
a lock, the fork and join of a team.  So the window's wait states come from the
same properties evaluated on a *view* of the trace: the events of the window
and of the calls crossing its edges, plus the partners those events point to.
Properties enumerate events through the context (`events_of_kind`,
`enters_of`, `matched_messages`, `collective_members`), which a WindowContext
restricts to the view; pointer look-ups (sendptr, enterptr, leaveptr, ...)
still read the whole trace.  The properties are evaluated by the engine's own
loop (engine.Evaluation) into the context's published store, as in the whole
analysis: the same order, the same declared inputs, the same failures.

What the view holds, and which property needs it:

- every event in the id range [first, stop): the window's events, widened on
  each selected location to the whole MPI or OpenMP runtime call open at the
  window's start and at its end, so every waiting call that overlaps the
  window has all its events in view (Late Sender's receives of one call,
  Late Receiver's sends completed by one MPI_Waitall, a lock's acquire);
- the ENTERs of the regions open at the window's start (a parallel region
  that began earlier is charged thread management);
- the receive of every send (and send completion) in range, so Late Receiver
  sees the messages whose sending call is in the window;
- the receives at or after the range's end of messages sent before the latest
  send of a message in view (the messages in flight there): Late Sender,
  wrong order and Messages in Wrong Order look for an earlier-sent message
  received later;
- all MPI_Init / MPI_Init_thread / MPI_Finalize calls when one is in view
  (each is compared with the same call on every process), and all forks and
  joins of an OpenMP trace (a join is found by nesting forks and joins);
- whole collective instances (MPI collectives, OpenMP barriers) of which a
  member is in view (collective_members does this).

tests/python/test_window_analysis.py compares the result with the whole
analysis restricted to the window on generated and real traces.
"""
from __future__ import annotations

import warnings
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..events import KINDS
from ..states import open_regions
from . import regions as rc
from .catalog import builtin_properties
from .context import AnalysisContext
from .engine import Evaluation, detect, is_detected
from .property import Property
from .published import uses

#: region classes whose instances are the program's own work: a window is not
#: widened to them (a wait state is charged to a runtime call, or, for thread
#: management, to the parallel region's ENTER alone)
_WORK_CLASSES = {rc.CLASS_CODE[c] for c in ("user", "omp_parallel", "omp_construct",
                                            "other_paradigm")}
_SEND_KINDS = (KINDS["MPI_SEND"], KINDS["MPI_ISEND"])
_RECV_KINDS = (KINDS["MPI_RECV"], KINDS["MPI_IRECV"])
_INIT_FINALIZE = ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")


def _in_flight(ev, st, stop: int, latest: int) -> np.ndarray:
    """The receives at or after event `stop` of the messages sent before event
    `latest`: found from the sends before `latest` or from the receives from
    `stop` on, whichever part of the trace is smaller."""
    m = ev.messages
    if latest <= len(ev) - stop:
        rows = np.nonzero(m.event < latest)[0]
        rows = rows[np.isin(ev.kind[m.event[rows]], _SEND_KINDS)]
        recv = st.gather("recvptr", m.event[rows].astype(np.int64))
        return recv[recv >= stop]
    rows = np.nonzero(m.event >= stop)[0]
    recv = m.event[rows[np.isin(ev.kind[m.event[rows]], _RECV_KINDS)]].astype(np.int64)
    send = st.gather("sendptr", recv)
    return recv[(send >= 0) & (send < latest)]


class View:
    """The events a window's analysis sees: the id range [start, stop) and the
    sorted `partners` outside it (see the module doc)."""

    def __init__(self, trace, lo: int, hi: int, locations: Sequence[int]):
        ev = trace.events
        st = trace.states
        n = len(ev)
        whole = AnalysisContext(trace)  # enumerates the whole trace
        cls = whole.region_class

        def runtime(enters):
            return ~np.isin(cls[whole.region_of_enter(enters)], list(_WORK_CLASSES))

        # widen to the runtime calls crossing the window's edges
        at_start, _ = open_regions(trace, locations, lo)
        calls = at_start[runtime(at_start)] if len(at_start) else at_start
        start = min(lo, int(calls.min())) if len(calls) else lo
        at_end, _ = open_regions(trace, locations, hi)
        calls = at_end[runtime(at_end)] if len(at_end) else at_end
        stop = hi
        if len(calls):
            leave = st.gather("leaveptr", calls)
            stop = n if (leave < 0).any() else max(hi, int(leave.max()) + 1)
        self.start, self.stop = start, stop
        parts = [at_start]

        kind = ev.kind[start:stop]
        # the receive of every send in range
        m = ev.messages
        sends = np.nonzero(np.isin(kind, _SEND_KINDS))[0] + start
        done = np.nonzero(kind == KINDS["MPI_ISEND_COMPLETE"])[0] + start
        if len(done):
            isend = m.partner_of(ev.ref_of(done))
            sends = np.concatenate((sends, isend[isend >= 0]))
        recv = st.gather("recvptr", sends)
        parts.append(recv[recv >= 0])

        # messages in flight at the range's end, sent before the latest send in view
        received = np.nonzero(np.isin(kind, _RECV_KINDS))[0] + start
        sent = st.gather("sendptr", np.concatenate((received, parts[-1])))
        latest = max(stop, int(sent.max()) + 1 if len(sent) else 0)
        parts.append(_in_flight(ev, st, stop, latest))

        named = whole.regions_named(*_INIT_FINALIZE)
        if named.any():
            enters = np.nonzero(kind == KINDS["ENTER"])[0] + start
            if named[whole.region_of_enter(enters)].any():
                parts.append(whole.enters_of(named))
        teams = ("THREAD_FORK", "OMP_FORK", "THREAD_JOIN", "OMP_JOIN")
        if whole.count_of_kind(*teams):
            parts.append(whole.events_of_kind(*teams))

        partners = np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]))
        self.partners = partners[(partners < start) | (partners >= stop)]
        self.ids = np.concatenate((np.arange(start, stop, dtype=np.int64), self.partners))
        self.ids.sort(kind="stable")

    def __len__(self) -> int:
        return len(self.ids)

    def contains(self, ids: np.ndarray) -> np.ndarray:
        """Whether each event id is in view."""
        ids = np.asarray(ids, dtype=np.int64)
        inside = (ids >= self.start) & (ids < self.stop)
        if len(self.partners):
            pos = np.minimum(np.searchsorted(self.partners, ids), len(self.partners) - 1)
            inside |= self.partners[pos] == ids
        return inside


class WindowContext(AnalysisContext):
    """An AnalysisContext whose event enumerations return the events in view."""

    def __init__(self, trace, view: View):
        super().__init__(trace)
        self.view = view

    def events_of_kind(self, *names) -> np.ndarray:
        ids = self.view.ids
        return ids[np.isin(self.events.kind[ids], [KINDS[n] for n in names])]

    def enters_of(self, region_table: np.ndarray) -> np.ndarray:
        ids = self.view.ids
        ids = ids[self.events.kind[ids] == KINDS["ENTER"]]
        spare = len(region_table) - 1
        reg = np.minimum(self.events.region_of(ids).astype(np.int64), spare)
        return ids[region_table[reg] & (reg < spare)]

    def matched_messages(self):
        cols = super().matched_messages()
        seen = self.view.contains(cols["recv"])  # the receives in view
        return {name: col[seen] for name, col in cols.items()}

    def collective_members(self, type: str, complete_only: bool = False):
        inst, members = super().collective_members(type, complete_only)
        # the instances with a member in view, whole
        touched = np.zeros(int(inst.max()) + 1 if len(inst) else 0, dtype=bool)
        touched[inst[self.view.contains(members)]] = True
        keep = touched[inst]
        return inst[keep], members[keep]


def wait_state_properties(properties: Optional[Sequence[Property]] = None) -> List[Property]:
    """The built-in properties whose occurrences are wait states (detected times),
    with the inputs they declare (subscribes, reads), in evaluation order."""
    catalog = list(properties) if properties is not None else builtin_properties()
    by_name = {p.name: p for p in catalog}
    chosen = {}  # in insertion order: every input before its readers

    def need(p):
        if p.name not in chosen:
            for name in uses(p):
                need(by_name[name])
            chosen[p.name] = p

    for p in catalog:
        if p.unit == "sec" and p.metric and not p.group and is_detected(p):
            need(p)
    return list(chosen.values())


def analyze_window(trace, lo: int, hi: int, locations: Sequence[int]):
    """The built-in wait-state properties evaluated on the view of the events
    lo..hi-1 (ids) of the selected locations: [(property, Instances)], for the
    occurrences whose waiting call overlaps the window (the caller selects them;
    occurrences outside it may be incomplete).  A property that raises is left
    out, with what reads it, and named in a warning."""
    from .. import _core

    previous = _core.use_store_memory()
    try:
        ctx = WindowContext(trace, View(trace, lo, hi, locations))
        found = []

        def value(p):
            inst = detect(p, ctx, ctx._published)
            if inst is not None and p.metric:
                found.append((p, inst))

        evaluation = Evaluation(ctx)
        evaluation.run(wait_state_properties(), value)
        for s in evaluation.switched_off:  # as the whole analysis does: left out, said
            if s.exception:
                warnings.warn("earlc: property %s left out of the window's wait states: %s: %s"
                              % (s.name, s.exception, s.message), RuntimeWarning)
        return found
    finally:
        _core.restore_numpy_memory(previous)


__all__ = ["View", "WindowContext", "analyze_window", "wait_state_properties"]
