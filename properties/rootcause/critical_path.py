"""The critical path: the chain of activities, across locations and through
their synchronisation points, that determines the run's length, and the
metrics on it (critical path, its activities, the imbalance impact, the
activities off the path)."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from earlc.analysis import Property

from earlc import _core
from earlc.analysis import regions as rc

from ..groups import group_max
from .arrays import at_cells, to_ticks
from .intervals import chunk_sums, points_and_chunks
from .parts import numbering, parts_of, prepare
from .points import READS
from .records import PathGraph, Spans, as_i64


def _omp_successors(ctx, omp_keys: np.ndarray):
    """Where the critical path goes on from each OpenMP point (omp_keys: sorted
    location * (n+1) + event), as CSR rows (offset, events): from a thread's fork
    point (its ENTER of a parallel region) to the master's, from a team barrier
    to every thread that did not wait there (in their order in the barrier's
    table)."""
    n = np.int64(ctx.n_events + 1)
    loc = ctx.events.location
    e = np.empty(0, np.int64)
    src, dst = [e], [e]
    if len(omp_keys):
        enters = ctx.thread_management()[0]
        fork = ctx.pointer("forkptr", enters)
        master = loc[ctx.enter_of(enters)] == loc[enters]
        # the master's ENTER of each fork (the last one when a fork has several)
        order = np.argsort(fork[master], kind="stable")
        m_fork, m_enter = fork[master][order], enters[master][order]
        at = np.searchsorted(m_fork, fork, side="right") - 1
        has = (at >= 0) & (m_fork[np.maximum(at, 0)] == fork) if len(m_fork) else at >= 0
        src.append(enters[has])
        dst.append(m_enter[at[has]])
        b = ctx.published["omp_barriers"]
        if len(b):
            inst, leave = b["instance"], b["leave"]
            free = np.nonzero(group_max(inst, b["enter_time"]) - b["enter_time"] <= 0)[0]
            free = free[np.argsort(inst[free], kind="stable")]
            lo = np.searchsorted(inst[free], inst, side="left")
            count = np.searchsorted(inst[free], inst, side="right") - lo
            rows = np.repeat(lo - np.concatenate(([0], np.cumsum(count)[:-1])), count)
            src.append(np.repeat(leave, count))
            dst.append(leave[free[rows + np.arange(count.sum())]])
    src = np.concatenate(src).astype(np.int64)
    dst = np.concatenate(dst).astype(np.int64)
    key = loc[src].astype(np.int64) * n + src
    owner = np.searchsorted(omp_keys, key)
    known = owner < len(omp_keys)
    known[known] = omp_keys[owner[known]] == key[known]
    owner, dst = owner[known], dst[known]
    order = np.argsort(owner, kind="stable")
    offset = np.searchsorted(owner[order], np.arange(len(omp_keys) + 1)).astype(np.int64)
    return offset, as_i64(dst[order])


def _path_waits(ctx, sp, own=None):
    """The wait states a critical path moves on at, as sorted keys location * (n+1)
    + waiting event, and where the path continues from each (the event waited
    for; a later record of the same waiting event wins); with `own` (a bool per
    location) those waited at on these locations only."""
    p, ls, lr, cw = sp.points, sp.late_sender, sp.late_receiver, sp.collective_waits
    loc = ctx.events.location
    n = np.int64(ctx.n_events + 1)
    wsel = cw.event != cw.delayer
    w_ev = np.concatenate((ls.waiter, lr.waiter, cw.event[wsel])).astype(np.int64)
    w_to = np.concatenate((ls.delayer, lr.delayer, cw.delayer[wsel])).astype(np.int64)
    waits = p.wait_at(w_ev) > 0
    if own is not None:
        waits &= own[loc[w_ev]]
    w_key = loc[w_ev[waits]].astype(np.int64) * n + w_ev[waits]
    order = np.argsort(w_key, kind="stable")
    w_key, w_to = w_key[order], w_to[waits][order]
    last = np.ones(len(w_key), dtype=bool)  # of each run of one event
    last[:-1] = w_key[1:] != w_key[:-1]
    return w_key[last], w_to[last]


def _mpi_calls(ctx, *names):
    """(ENTER, LEAVE) of every completed call of the named MPI functions."""
    enters = ctx.enters_of(np.isin(ctx._region_tables[1], list(names)))
    lv = ctx.leave_of(enters)
    return enters[lv >= 0], lv[lv >= 0]


def _is_mpi_program(ctx) -> bool:
    """Whether the trace records MPI: an MPI call or an MPI record."""
    mpi = [code for c, code in rc.CLASS_CODE.items() if c.startswith("mpi")]
    table = np.isin(ctx.region_class, mpi)
    table[-1] = False
    return bool(ctx.count_of_kind("MPI_SEND", "MPI_ISEND", "MPI_RECV", "MPI_IRECV",
                                  "MPI_COLLECTIVE_END") or len(ctx.enters_of(table)))


def _cpu_locations(ctx) -> np.ndarray:
    return np.asarray([l.index for l in ctx.trace.locations if l.type == "CPU_THREAD"],
                      dtype=np.int64)


@dataclass
class Walk:
    """A walk of the critical path: where it starts (an event of a location, or
    the location's end: -1), whether a location without an init event ends it
    at the location's start, the init event per location (-1: none) and the
    wait states it moves on at besides those of every walk (`more_key`,
    `more_to`: sorted keys and partners)."""
    location: int
    event: int
    ends_at_start: bool
    init_of: np.ndarray
    more_key: np.ndarray
    more_to: np.ndarray


def _scalasca_walk(ctx, sp, is_mpi: bool, has_events: bool) -> Optional[Walk]:
    """Scalasca's critical path, None where there is none.  Of an MPI program:
    from the MPI_Finalize entered last back to MPI_Init, moving at each wait
    state on it to the process waited for (the sender of a Late Sender, the
    receiver of a Late Receiver, the latest member or the root of a
    collective); without MPI_Finalize there is none (0), without MPI_Init it
    lacks its first stretch, and a counted warning says so.  Of a program
    without MPI (OpenMP, serial; Scalasca's OpenMP analyzer): from the end of
    the master thread back to its start.  (Every part of a trace analysed in
    parts holds every process's MPI_Init and MPI_Finalize.)"""
    loc = ctx.events.location
    init_of = np.full(ctx.n_locations, -1, dtype=np.int64)
    none = np.empty(0, np.int64)
    if not is_mpi:
        cpu = _cpu_locations(ctx)
        if not len(cpu) or not has_events:
            return None
        return Walk(int(cpu[0]), -1, True, init_of, none, none)
    fin_enter, fin_leave = _mpi_calls(ctx, "MPI_Finalize")
    init_enter, init_leave = _mpi_calls(ctx, "MPI_Init", "MPI_Init_thread")
    missing = [name for name, calls in (("MPI_Init", init_leave), ("MPI_Finalize", fin_leave))
               if not len(calls)]
    if missing:
        ctx.warn("critical_path_incomplete",
                 "%s has no %s: Scalasca's critical path runs from the MPI_Finalize entered "
                 "last back to MPI_Init, so %s, as in Scalasca; critical_path_trace is the "
                 "critical path from the start of this trace to its end" % (
                     ctx.trace.path, " and no ".join(missing),
                     "it is 0 here (critical_path, critical_path_activities and "
                     "critical_imbalance_impact are 0, non_critical_path_activities holds all "
                     "the time without waiting)" if not len(fin_leave) else
                     "it lacks its stretch from the start of the trace to its first wait "
                     "state"))
    if not len(fin_leave):
        return None
    for l, e in zip(loc[init_leave].tolist(), init_leave.tolist()):
        init_of[l] = e
    t = ctx.time_of(fin_enter)
    start = np.lexsort((loc[fin_enter], -t))[0]
    return Walk(int(loc[fin_leave[start]]), int(fin_leave[start]), False, init_of, none, none)


def _finalize_waits(ctx, sp):
    """The wait in MPI_Finalize as a wait for the process entering it last:
    (sorted keys location * (n+1) + leave of every MPI_Finalize waited in, the
    leave of the one entered last)."""
    loc = ctx.events.location
    fin_enter, fin_leave = _mpi_calls(ctx, "MPI_Finalize")
    if not len(fin_leave):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    wait = sp.points.wait_at(fin_leave)
    latest = fin_leave[np.lexsort((loc[fin_enter], -ctx.time_of(fin_enter)))[0]]
    n = np.int64(ctx.n_events + 1)
    f_key = loc[fin_leave[wait > 0]].astype(np.int64) * n + fin_leave[wait > 0]
    return f_key, np.full(len(f_key), latest, dtype=np.int64)


def _last_cpu_event(ctx) -> int:
    """The last event of a CPU location (-1: none)."""
    loc = ctx.events.location
    cpu = np.zeros(ctx.n_locations, dtype=bool)
    cpu[_cpu_locations(ctx)] = True
    end, step = ctx.n_events, 1024
    last = -1
    while end > 0 and last < 0:
        tail = np.nonzero(cpu[loc[max(end - step, 0):end]])[0]
        if len(tail):
            last = max(end - step, 0) + int(tail[-1])
        end, step = end - step, step * 2
    return last


def _trace_walk(ctx, sp, last: int) -> Optional[Walk]:
    """earlc's critical path of the whole trace: from the end of the CPU location
    whose events end last (`last`: its last event) back to the start of the
    trace, moving at the wait states Scalasca's path moves at and also at the
    wait in MPI_Finalize (to the process that entered it last)."""
    if last < 0:
        return None
    f_key, f_to = _finalize_waits(ctx, sp)
    return Walk(int(ctx.events.location[last]), -1, True,
                np.full(ctx.n_locations, -1, dtype=np.int64), f_key, f_to)


def _graph(ctx, sp, w_key, w_to, walk: Walk) -> PathGraph:
    """The graph the C core walks: the wait states (with the walk's own), the
    OpenMP points and their successors."""
    if len(walk.more_key):
        key = np.concatenate((w_key, walk.more_key))
        order = np.argsort(key, kind="stable")
        w_key, w_to = key[order], np.concatenate((w_to, walk.more_to))[order]
    # OpenMP: at a thread's fork point (its ENTER of a parallel region) the path
    # moves to the master's fork point; at a team barrier it continues on the
    # threads that did not wait there
    next_offset, next_event = _omp_successors(ctx, sp.omp_keys)
    return PathGraph(stride=ctx.n_events + 1,
                     location=np.ascontiguousarray(ctx.events.location, dtype=np.int32),
                     ends_at_start=walk.ends_at_start, init_event=walk.init_of, wait_key=w_key,
                     wait_partner=w_to, omp_key=sp.omp_keys, omp_next_offset=next_offset,
                     omp_next_event=next_event)


def _stretches(graph: PathGraph, walk: Walk):
    """The stretches of a walk, in the order walked: (location, start, end)."""
    out = _core.rc_critical_walk(graph, int(walk.location), int(walk.event))
    return tuple(np.frombuffer(out[k], np.int64) for k in ("location", "start", "end"))


def _stretch_times(ctx, sp, stretches):
    """The time of the stretches as float ticks per (location, cnode): each
    counts the exclusive time per call path between its two ends, without the
    waiting time at its start (at most the time its call path has there)."""
    sl, sf, st = stretches
    num = numbering(ctx)
    q, c, v = chunk_sums(ctx, Spans(location=sl, start=sf, end=st)).columns()
    NC = num.n + 1
    cp = np.zeros((ctx.n_locations + 1, NC))
    at_cells(np.add, cp, sl[q], c, v)
    # a stretch from a location's start (-1) has no point at its start
    cn = np.where(sf >= 0, num.cnode[np.maximum(sf, 0)], -1).astype(np.int64)
    k = np.nonzero(cn >= 0)[0]
    entry = np.searchsorted(q * NC + c, k * NC + cn[k])
    found = entry < len(q)
    found[found] = (q[entry[found]] == k[found]) & (c[entry[found]] == cn[k][found])
    own = np.zeros(len(k))
    own[found] = v[entry[found]]
    at_cells(np.subtract, cp, sl[k], cn[k], np.minimum(sp.points.wait_at(sf[k]), own))
    return cp


def _path_metrics(ctx, sp, cp, parts=None):
    """The metrics of Scalasca's critical path cp (float ticks per location and
    cnode): its activities everywhere, the activities off it and the imbalance
    impact.  In parts (`parts`: this part) cp holds the path on this part's
    locations, and so do the metrics; the sums over every location come from
    every part."""
    loc = ctx.events.location
    n = np.int64(ctx.n_events + 1)
    p, omp_keys = sp.points, sp.omp_keys
    NL, NC = cp.shape
    # every CPU location's time without its waiting time; a worker thread counts
    # only from each fork of its team to its last OpenMP point before the next
    # (Scalasca drops a worker's time outside its teams)
    cpu_locs = _cpu_locations(ctx)
    if parts is not None:
        cpu_locs = cpu_locs[parts.own[cpu_locs]]
    workers = np.empty(0, np.int64)
    if len(omp_keys):
        enters = ctx.thread_management()[0]
        wsel = loc[ctx.enter_of(enters)] != loc[enters]
        workers = np.unique(loc[enters[wsel]].astype(np.int64))
    whole = np.setdiff1d(cpu_locs, workers)
    r_loc = [whole]
    r_lo = [np.full(len(whole), -1, dtype=np.int64)]
    r_hi = [np.full(len(whole), ctx.n_events, dtype=np.int64)]
    if len(workers):
        fe = enters[wsel]
        fl = loc[fe].astype(np.int64)
        fkey = np.sort(fl * n + fe)
        fl, fe = fkey // n, fkey % n
        nxt_key = np.empty(len(fkey), dtype=np.int64)
        nxt_key[:-1] = fkey[1:]
        last_of_loc = np.ones(len(fkey), dtype=bool)
        last_of_loc[:-1] = fl[1:] != fl[:-1]
        nxt_key[last_of_loc] = fl[last_of_loc] * n + ctx.n_events
        j = np.searchsorted(omp_keys, nxt_key) - 1
        last = omp_keys[np.maximum(j, 0)] - fl * n
        ok = (j >= 0) & (omp_keys[np.maximum(j, 0)] >= fl * n) & (last > fe)
        r_loc.append(fl[ok])
        r_lo.append(fe[ok])
        r_hi.append(last[ok])
    everything = chunk_sums(ctx, Spans(location=np.concatenate(r_loc),
                                       start=np.concatenate(r_lo),
                                       end=np.concatenate(r_hi))).columns()
    lt = np.zeros((NL, NC))
    at_cells(np.add, lt, np.concatenate(r_loc)[everything[0]], everything[1], everything[2])
    wt = np.zeros((NL, NC))
    ok = p.cnode >= 0
    if parts is not None:
        ok &= parts.own[p.location]
    at_cells(np.add, wt, p.location[ok], p.cnode[ok], np.maximum(p.wait[ok], 0))
    ltimes = lt - np.minimum(lt, wt)
    # the path's time per call path: integer ticks, the same sum in any order
    g = cp.sum(axis=0) if parts is None else parts.sum(lambda: cp.sum(axis=0))
    on = g > 0
    activities = np.where(on[None, :], np.minimum(g[None, :], ltimes), 0.0)
    non_critical = np.maximum(ltimes - g[None, :], 0.0)
    cpu = np.zeros(NL, dtype=bool)
    cpu[cpu_locs] = True
    excess = np.maximum(g[None, :] - ltimes, 0.0)
    aggr_wait = g.sum() - ltimes.sum(axis=1)
    aggr_excess = excess.sum(axis=1)
    factor = np.where(aggr_excess > 0, aggr_wait / np.where(aggr_excess > 0, aggr_excess, 1), 0.0)
    weighted = excess * factor[:, None]
    if parts is not None:
        # every CPU location's row, summed as the single-process analysis sums them
        weighted, cpu = _every_cpu_row(ctx, parts, weighted, cpu)
    global_costs = weighted[cpu].sum(axis=0)
    share = np.where(on[None, :] & (cp > 0), cp / np.where(on, g, 1)[None, :], 0.0)
    imbalance = np.maximum(share * global_costs[None, :], 0.0)
    return {"critical_path_activities": activities,
            "non_critical_path_activities": non_critical,
            "critical_imbalance_impact": imbalance}


def _every_cpu_row(ctx, parts, weighted, cpu):
    """Collective: the rows of every part's CPU locations of `weighted` (the
    others' sent as their non-zero entries) and the mask of every CPU
    location."""
    def mine():
        l, c = np.nonzero(weighted * cpu[:, None])
        return l, c, weighted[l, c], np.nonzero(cpu)[0]
    every = parts.allgather(mine)
    out = np.zeros_like(weighted)
    mask = np.zeros_like(cpu)
    for l, c, v, locs in every:
        out[l, c] = v
        mask[locs] = True
    return out, mask


def _critical_path(ctx):
    """The critical paths and the metrics of Scalasca's, as (cnode, location,
    ticks) rows by metric name (for a part of a trace analysed in parts: its
    own locations', found with the other parts: critical_parts.py)."""
    def compute():
        parts = parts_of(ctx)
        if parts is None:
            return _paths(ctx, None)
        return parts.run(lambda: _paths(ctx, prepare(ctx)))
    return ctx.memo("critical_path", compute)


def _paths(ctx, parts):
    sp = points_and_chunks(ctx)
    NC = numbering(ctx).n + 1
    none = np.zeros((ctx.n_locations + 1, NC))
    if parts is None:
        w_key, w_to = _path_waits(ctx, sp)
        walks = (_scalasca_walk(ctx, sp, _is_mpi_program(ctx), ctx.n_events > 0),
                 _trace_walk(ctx, sp, _last_cpu_event(ctx)))
        stretches = [_stretches(_graph(ctx, sp, w_key, w_to, w), w) if w is not None else None
                     for w in walks]
    else:
        from .critical_parts import walks_in_parts

        stretches = walks_in_parts(ctx, parts, sp)
    paths = [_stretch_times(ctx, sp, s) if s is not None else none for s in stretches]
    out = {"critical_path": paths[0]}
    out.update(_path_metrics(ctx, sp, paths[0], parts))
    out["critical_path_trace"] = paths[1]

    def rows(m):
        l, c = np.nonzero(m)
        return to_ticks(ctx.n_locations, l, c, m[l, c])
    return {name: rows(m) for name, m in out.items()}


class _CriticalPath(Property):
    measures = "time"
    unit, group, reads = "sec", "root_cause", READS
    across_parts = True

    def totals(self, ctx):
        return numbering(ctx).local_rows(_critical_path(ctx)[self.name])


class CriticalPath(_CriticalPath):
    name, title, cube_id = "critical_path", "Critical path", "critical_path"
    description = ("The critical path: from the process that enters MPI_Finalize last back "
                   "in time, moving at every wait state to the process waited for, until "
                   "MPI_Init. Its time per call path and location, without waiting time: what "
                   "determines the program's run time. As in Scalasca, a trace without "
                   "MPI_Finalize (one cut to a phase) has none (0, and all the time is off the "
                   "path), a trace without MPI_Init lacks the path's first stretch, and a "
                   "counted warning (critical_path_incomplete) says so; critical_path_trace is "
                   "the path of such traces. A program without MPI (OpenMP, serial) has the "
                   "path of Scalasca's OpenMP analyzer: from the end of the master thread back "
                   "to its start.")
    diagnosis = ("Only call paths on the critical path shorten the run when optimised; a "
                 "large share on one process points to imbalance or serial work.")


class CriticalPathActivities(_CriticalPath):
    name, title = "critical_path_activities", "Critical-path activities"
    cube_id = "critical_path_activities"
    description = ("Per location, the time (without waiting) in call paths that appear on the "
                   "critical path, at most their time on the path.")
    diagnosis = "The resources the critical path's activities consume everywhere."


class CriticalImbalanceImpact(_CriticalPath):
    measures = "cause"
    name, title = "critical_imbalance_impact", "Critical-path imbalance impact"
    cube_id = "critical_imbalance_impact"
    description = ("The waiting time of all locations mapped onto the call paths that spend "
                   "more time on the critical path than on a location (their excess), in "
                   "proportion to their time on the path.")
    diagnosis = "Imbalanced activities with a global effect on run time: balance them first."


class NonCriticalPathActivities(_CriticalPath):
    name, title = "non_critical_path_activities", "Non-critical-path activities"
    cube_id = "non_critical_path_activities"
    description = ("Per location, the time (without waiting) in call paths beyond their time "
                   "on the critical path: optimising it does not shorten the run.")
    diagnosis = "Work off the critical path: not worth optimising for run time."


class CriticalPathTrace(_CriticalPath):
    name, title = "critical_path_trace", "Critical path (whole trace)"
    description = ("earlc's own critical path of the whole trace: from the end of the thread "
                   "whose events end last back to the start of the trace, moving at every wait "
                   "state to the location waited for (at the wait states of Scalasca's path, "
                   "and at the wait in MPI_Finalize to the process entering it last). Unlike "
                   "Scalasca's critical path (critical_path), which runs from MPI_Finalize to "
                   "MPI_Init and is 0 on a trace without them (a trace cut to a phase), it "
                   "needs neither and counts the time before MPI_Init and after MPI_Finalize; "
                   "on a program without MPI it equals Scalasca's when the master thread ends "
                   "last.")
    diagnosis = ("Only call paths on the critical path shorten the run when optimised: read it "
                 "where critical_path is 0 or misses parts of the run.")
