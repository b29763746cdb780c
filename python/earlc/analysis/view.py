"""The analysis of a view of a trace (earlc.view.TraceView: a time window, some
locations, some regions).

The analysis of a view is the whole trace's analysis restricted to the view, cell by
cell, so that views that split a trace add up to the whole:

- times that come from the call tree (Time, Execution, Computation, MPI, ... and the
  visits) are the exclusive time of each (call path, location) inside the view: the
  stretches between a location's consecutive events, cut at the window's edges, on the
  selected locations, for call paths inside the selected regions (a call path is
  inside a region when the region is one of its frames);
- an occurrence of a property (a wait state) counts, whole, in the view that holds the
  event it is charged to (its `where`): the same rule that places it in a (call path,
  location) cell of the whole analysis.  Occurrences are found as the window analysis
  finds them (analysis/window.py): the properties enumerate the events of the window
  widened to the calls crossing its edges and the partners those events point to, so
  each occurrence and its severity are those of the whole analysis;
- counts of records (messages, bytes, hardware counters) count the records in the view.

This module holds the pieces the engine runs with: ViewCallTree (the call tree of
the whole trace, its rows computed for the view) and ViewContext (an AnalysisContext
that enumerates the window's events, reads that call tree, and counts an occurrence
only where its `where` is in the view).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..events import KINDS
from ..calltree import CallTree, window_stretches
from ..sums import sum_by_key
from .window import View, WindowContext


class ViewCallTree(CallTree):
    """The whole trace's call tree (the same call paths, numbered the same) with its
    rows (exclusive time, visits, idle time per call path and location) computed for
    a view, and the cnode of the events outside the view set to -1."""

    def __init__(self, view, base: CallTree):  # noqa: super().__init__ builds from C
        self._trace = view.trace
        self.parent = base.parent
        self.region = base.region
        self.extra_names = dict(base.extra_names)
        cnode, loc, start, stop, idle = window_stretches(view, base)
        ticks = stop - start
        n_loc = np.int64(len(view.trace.locations))
        key = cnode * n_loc + loc
        busy_keys, busy = sum_by_key(key[~idle], ticks[~idle])
        idle_keys, idle_sum = sum_by_key(key[idle], ticks[idle])
        enters = view.ids[view.trace.events.kind[view.ids] == KINDS["ENTER"]]
        ecn = base.event_cnode[enters].astype(np.int64)
        ok = ecn >= 0
        inside = view.cnode_mask(base)
        if inside is not None:
            ok[ok] &= inside[ecn[ok]]
        visit_keys, visits = sum_by_key(ecn[ok] * n_loc + view.trace.events.location[enters][ok],
                                        np.ones(int(ok.sum()), dtype=np.int64))
        program = self._program_rows(view, base, busy_keys, busy, n_loc)
        keys = np.union1d(np.union1d(busy_keys, idle_keys),
                          np.union1d(visit_keys, program[0]))

        def spread(k, v):
            out = np.zeros(len(keys), dtype=np.int64)
            out[np.searchsorted(keys, k)] = v
            return out

        self.row_cnode = (keys // n_loc).astype(np.int32)
        self.row_location = (keys % n_loc).astype(np.int32)
        self.row_time = (spread(busy_keys, busy) + spread(program[0], program[1])).astype(
            np.uint64)
        self.row_visits = (spread(visit_keys, visits) +
                           spread(program[0], program[2])).astype(np.uint64)
        self.row_idle = spread(idle_keys, idle_sum).astype(np.uint64)
        cn = base.event_cnode.copy()
        cn[~view.mask()] = -1
        self.event_cnode = cn

    def charge_thread_management_of_view(self, ctx, base: CallTree, enters, fork_part,
                                         join_part) -> None:
        """Thread management (CallTree.charge_thread_management) as far as it lies in
        the view: the fork part (from the team's fork to the thread's ENTER) and the
        join part (from the thread's LEAVE to the join) cut at the window's edges, on
        the view's locations, for parallel regions inside its regions."""
        view = ctx.trace_view
        time = view.trace.events.time.view(np.int64)
        t_enter = time[enters]
        leave = ctx.leave_of(enters)
        t_leave = np.where(leave >= 0, time[np.maximum(leave, 0)], t_enter)

        def inside(a, b):
            return np.maximum(np.minimum(b, view.last) - np.maximum(a, view.first), 0)

        cost = inside(t_enter - fork_part, t_enter) + inside(t_leave, t_leave + join_part)
        cn = base.event_cnode[enters].astype(np.int64)
        keep = view._selected[view.trace.events.location[enters]] & (cn >= 0) & (cost > 0)
        mask = view.cnode_mask(base)
        if mask is not None:
            keep[keep] &= mask[cn[keep]]
        own = self.event_cnode
        self.event_cnode = base.event_cnode  # the charge finds the call paths of its ENTERs
        try:
            self.charge_thread_management(ctx, enters[keep], cost[keep])
        finally:
            self.event_cnode = own

    def _program_rows(self, view, base, busy_keys, busy, n_loc):
        """The program at the root of the call tree (CallTree._add_program): on each
        location that records its PROGRAM_BEGIN and PROGRAM_END, the part of the
        program's span inside the window that no region covers, and its visit when
        the PROGRAM_BEGIN is in the view: (keys, ticks, visits)."""
        program = list(base.extra_names)
        z = np.empty(0, np.int64)
        if not program:
            return z, z, z
        program = program[0]
        ev = view.trace.events
        prog = ev.programs
        begin, end = {}, {}
        for e, k in zip(prog.event.tolist(), ev.kind[prog.event].tolist()):
            loc = int(ev.location[e])
            if k == KINDS["PROGRAM_BEGIN"]:
                begin.setdefault(loc, e)
            elif k == KINDS["PROGRAM_END"]:
                end[loc] = e
        time = ev.time.view(np.int64)
        covered = {}
        for k, v in zip(busy_keys.tolist(), busy.tolist()):
            covered[k % int(n_loc)] = covered.get(k % int(n_loc), 0) + v
        keys, values, visits = [], [], []
        for loc in view.location_indices.tolist():
            if loc not in begin or loc not in end or time[end[loc]] < time[begin[loc]]:
                continue
            inside = view.cnode_mask(base)
            if inside is not None and not inside[program]:
                continue
            span = min(int(time[end[loc]]), view.last) - max(int(time[begin[loc]]), view.first)
            keys.append(program * int(n_loc) + loc)
            values.append(max(span - covered.get(loc, 0), 0))
            visits.append(int(view.contains(np.array([begin[loc]]))[0]))
        return (np.asarray(keys, dtype=np.int64), np.asarray(values, dtype=np.int64),
                np.asarray(visits, dtype=np.int64))


class ViewContext(WindowContext):
    """The AnalysisContext of a view's analysis (see the module doc)."""

    def __init__(self, view):
        trace = view.trace
        super().__init__(trace, View(trace, view.lo, view.hi, view.location_indices.tolist()))
        self.trace_view = view

    @cached_property
    def calltree(self) -> CallTree:
        base = self.trace_view.base_calltree()
        ct = ViewCallTree(self.trace_view, base)
        enters, fork_part, join_part = self.thread_management()
        if len(enters):
            ct.charge_thread_management_of_view(self, base, enters, fork_part, join_part)
        return ct

    def counted(self, inst):
        """The occurrences charged to an event of the view."""
        if inst is None or not len(inst):
            return inst
        return inst.select(np.nonzero(self.trace_view.contains(inst.where))[0])


def view_context(view, properties=None) -> ViewContext:
    """The context of earlc.analyze(view); the root causes need the whole trace."""
    asked = [properties] if isinstance(properties, str) else list(properties or ())
    names = {getattr(p, "name", p) for p in asked}
    if names & {"all", "root_cause"}:
        raise ValueError("the root causes follow delays through the whole trace: analyse the "
                         "trace, not a view of it, with properties='all'")
    return ViewContext(view)


__all__ = ["ViewCallTree", "ViewContext", "view_context"]
