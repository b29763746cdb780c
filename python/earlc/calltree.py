"""The call tree of a trace: call paths (cnodes) with their parent and region,
the call path of every event, and the exclusive time and visits per (call path,
location), from the C core (csrc/calltree.c, earl_calltree.h).

A model object of the trace, as its EARL layer is (`trace.calltree`): the
profiles (profiles.py) read it as it is; the analysis (analysis/context.py)
takes its own, into which it counts the threads' management time, as Scalasca
does.
"""
from __future__ import annotations

import numpy as np

from . import _core
from .events import KINDS, column
from .sums import sum_by_key


class CallTree:
    """Call paths: parent and region per cnode, the cnode of every event, and the
    exclusive time and visits per (cnode, location), from the C core."""

    def __init__(self, trace, threads: int = 1):
        # built in C from the EARL layer's own (32-bit) enterptr, its processes
        # walked in parts on `threads` threads (0: one per core; the same tree);
        # or, when the EARL layer walked it on the way (States(calltree=True), as
        # the analysis builds it), that tree, taken once
        core = _core.CallTree(trace.states._core, threads=threads)
        self._core = core
        self.parent = column(core, "parent", "i")
        self.region = column(core, "region", "I")
        self.event_cnode = column(core, "event_cnode", "i")
        self.row_cnode = column(core, "row_cnode", "i")
        self.row_location = column(core, "row_location", "i")
        self.row_time = column(core, "row_time", "Q")
        self.row_visits = column(core, "row_visits", "Q")
        self.row_idle = column(core, "row_idle", "Q")
        self._trace = trace
        #: names of cnodes that are no OTF2 region (the program, see _add_program)
        self.extra_names = {}
        self._add_program(trace)

    def _add_program(self, trace) -> None:
        """A location that records PROGRAM_BEGIN and PROGRAM_END runs its regions
        inside the program: as Scalasca does, the call tree gets the program as
        its root (named after the program), visited once and holding the time
        from PROGRAM_BEGIN to PROGRAM_END that no region covers."""
        ev = trace.events
        prog = ev.programs
        if len(prog) == 0:
            return
        kinds = ev.kind[prog.event]
        begin, end = {}, {}
        for e, k, name in zip(prog.event.tolist(), kinds.tolist(), prog.name.tolist()):
            loc = int(ev.location[e])
            if k == KINDS["PROGRAM_BEGIN"]:
                begin.setdefault(loc, (e, name))
            elif k == KINDS["PROGRAM_END"]:
                end[loc] = e
        locs = sorted(l for l in begin if l in end and ev.time[end[l]] >= ev.time[begin[l][0]])
        if not locs:
            return
        on = np.isin(self.row_location, locs)
        roots = np.unique(self.row_cnode[on][self.parent[self.row_cnode[on]] < 0])
        program = len(self.parent)
        self.parent = np.append(self.parent, np.int32(-1))
        self.parent[roots] = program
        self.region = np.append(self.region, np.uint32(0xFFFFFFFF))
        # the program's name without its directory: '/' separates a path's frames
        name = (trace._string(int(begin[locs[0]][1])) or "").rstrip("/").rsplit("/", 1)[-1]
        self.extra_names[program] = name or "program"
        # the time the regions cover on each location, summed exactly
        loc_keys, covered = sum_by_key(self.row_location.astype(np.int64),
                                       self.row_time.astype(np.int64))
        own = dict(zip(loc_keys.tolist(), covered.tolist()))
        # a damaged trace's timestamps can make these exceed what the int64
        # columns hold: clamp rather than fail (its warnings say it is damaged)
        top = (1 << 63) - 1
        rest = [min(max(int(ev.time[end[l]]) - int(ev.time[begin[l][0]]) - own.get(l, 0), 0),
                    top) for l in locs]
        n = len(locs)
        self.row_cnode = np.append(self.row_cnode, np.full(n, program, np.int32))
        self.row_location = np.append(self.row_location, np.asarray(locs, np.int32))
        self.row_time = np.append(self.row_time, np.asarray(rest, np.uint64))
        self.row_visits = np.append(self.row_visits, np.ones(n, np.uint64))
        self.row_idle = np.append(self.row_idle, np.zeros(n, np.uint64))

    def charge_thread_management(self, ctx, enters: np.ndarray, cost: np.ndarray) -> None:
        """Count thread management (cost per ENTER of a parallel region) in the
        parallel region's exclusive time, as Scalasca does: on the master the time
        moves there from the call path that forked; on a worker, whose own regions
        do not cover it, it is added."""
        cnode = self.event_cnode[enters].astype(np.int64)
        loc = ctx.events.location[enters].astype(np.int64)
        ok = (cnode >= 0) & (cost > 0)
        cnode, loc, cost = cnode[ok], loc[ok], cost[ok]
        if not len(cnode):
            return
        L = np.int64(ctx.n_locations + 1)
        keys = self.row_cnode.astype(np.int64) * L + self.row_location
        order = np.argsort(keys)
        time = self.row_time.astype(np.int64)

        def add(c, l, v):
            k = c * L + l
            pos = order[np.minimum(np.searchsorted(keys, k, sorter=order), len(keys) - 1)]
            hit = keys[pos] == k
            np.add.at(time, pos[hit], v[hit])

        add(cnode, loc, cost)
        # the master's part was the forking call path's own time
        master = (self.parent[cnode] >= 0) & (ctx.events.location[ctx.enter_of(enters[ok])] == loc)
        add(self.parent[cnode[master]].astype(np.int64), loc[master], -cost[master])
        self.row_time = np.maximum(time, 0).astype(np.uint64)

    def _name(self, cnode: int) -> str:
        extra = self.extra_names.get(cnode)
        if extra is not None:
            return extra
        region = self._trace.regions.get(int(self.region[cnode]))
        return region.name if region else "?"

    def __len__(self) -> int:
        return len(self.parent)

    def path(self, cnode: int) -> str:
        """'main/solve/MPI_Recv' for a cnode."""
        parts = []
        while cnode >= 0:
            parts.append(self._name(cnode))
            cnode = int(self.parent[cnode])
        return "/".join(reversed(parts))

    def paths(self) -> list:
        """The path of every cnode, computed parents first."""
        out = [None] * len(self)
        for c in range(len(self)):
            todo = []
            while c >= 0 and out[c] is None:  # parents usually have smaller ids
                todo.append(c)
                c = int(self.parent[c])
            for t in reversed(todo):
                p = int(self.parent[t])
                out[t] = self._name(t) if p < 0 else out[p] + "/" + self._name(t)
        return out


def window_stretches(view, base_tree):
    """The stretches of time of the view: for each selected location, between each
    of its events and the next, cut to the window [view.first, view.last]: (cnode
    charged, location, start, stop (ticks), idle), as the C call tree charges them (the location's
    own innermost call path after the earlier event; idle under a frame inherited
    from its master), only those of call paths inside the view's regions."""
    trace = view.trace
    ev = trace.events
    st = trace.states
    parts = []
    for loc in view.location_indices.tolist():
        ids = ev.of_location(loc)
        p0 = max(int(np.searchsorted(ids, view.lo)) - 1, 0)  # the stretch entering the window
        p1 = min(int(np.searchsorted(ids, view.hi)) + 1, len(ids))  # and the one leaving it
        if p1 - p0 >= 2:
            parts.append(ids[p0:p1].astype(np.int64))
    if not parts:
        z = np.empty(0, np.int64)
        return z, z, z, z, np.empty(0, bool)
    firsts = np.concatenate([p[:-1] for p in parts])
    nexts = np.concatenate([p[1:] for p in parts])
    kind = ev.kind[firsts]
    enter = st.enterptr_of(firsts)
    open_ = np.where(kind == KINDS["ENTER"], firsts, enter)
    leave = kind == KINDS["LEAVE"]
    open_[leave] = np.where(enter[leave] >= 0, st.enterptr_of(np.maximum(enter[leave], 0)), -1)
    loc = ev.location[firsts].astype(np.int64)
    has = open_ >= 0
    cnode = np.full(len(firsts), -1, dtype=np.int64)
    cnode[has] = base_tree.event_cnode[open_[has]]
    idle = np.zeros(len(firsts), dtype=bool)
    idle[has] = ev.location[open_[has]] != loc[has]
    time = ev.time.view(np.int64)
    start = np.maximum(time[firsts], view.first)
    stop = np.minimum(time[nexts], view.last)
    ticks = np.maximum(stop - start, 0)
    keep = (cnode >= 0) & (ticks > 0)
    inside = view.cnode_mask(base_tree)
    if inside is not None:
        keep[keep] &= inside[cnode[keep]]
    return cnode[keep], loc[keep], start[keep], stop[keep], idle[keep]
