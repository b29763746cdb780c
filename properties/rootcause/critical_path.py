"""The critical path: the chain of activities, across locations and through
their synchronisation points, that determines the run's length, and the
metrics on it (critical path, its activities, the imbalance impact, the
activities off the path)."""
import numpy as np

from earlc.analysis import Property

from ..groups import group_max
from earlc import _core

from .intervals import _chunk_sums, _chunks, _i64, to_ticks
from .points import READS, sync_points


def _wait_at(p, events: np.ndarray) -> np.ndarray:
    """The waiting time at each event: its synchronisation point's, 0.0 where it
    is none (p: the points, sorted by event)."""
    if not len(p["event"]):
        return np.zeros(len(events))
    row = np.minimum(np.searchsorted(p["event"], events), len(p["event"]) - 1)
    return np.where(p["event"][row] == events, p["wait"][row], 0.0)


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
    return offset, _i64(dst[order])


def _critical_path(ctx):
    """Scalasca's critical path of an MPI program and its metrics, as float ticks
    per (location, cnode): the path starts on the process entering MPI_Finalize
    last and runs back in time; at each wait state on it, it moves to the process
    waited for (the sender of a Late Sender, the receiver of a Late Receiver, the
    latest member or the root of a collective), until MPI_Init.  Each stretch
    counts the exclusive time per call path between its two ends, without the
    waiting time at its start."""
    def compute():
        p, _, _, ls, lr, cw = sync_points(ctx)[:6]
        ev = ctx.events
        loc = ev.location
        n = np.int64(ctx.n_events + 1)
        # wait states on the path, and where the path continues from each (a later
        # record of the same waiting event wins)
        wsel = cw["event"] != cw["delayer"]
        w_ev = np.concatenate((ls["recv"], lr["cmp"], cw["event"][wsel])).astype(np.int64)
        w_to = np.concatenate((ls["send"], lr["req"], cw["delayer"][wsel])).astype(np.int64)
        waits = _wait_at(p, w_ev) > 0
        w_key = loc[w_ev[waits]].astype(np.int64) * n + w_ev[waits]
        order = np.argsort(w_key, kind="stable")
        w_key, w_to = w_key[order], w_to[waits][order]
        last = np.ones(len(w_key), dtype=bool)  # of each run of one event
        last[:-1] = w_key[1:] != w_key[:-1]
        w_key, w_to = w_key[last], w_to[last]
        # MPI_Init and MPI_Finalize
        def leaves(names):
            enters = ctx.enters_of(np.isin(ctx._region_tables[1], list(names)))
            lv = ctx.leave_of(enters)
            return enters[lv >= 0], lv[lv >= 0]
        fin_enter, fin_leave = leaves(("MPI_Finalize",))
        init_enter, init_leave = leaves(("MPI_Init", "MPI_Init_thread"))
        if not len(fin_leave) or not len(init_leave):
            return None
        init_of = np.full(ctx.n_locations, -1, dtype=np.int64)
        for l, e in zip(loc[init_leave].tolist(), init_leave.tolist()):
            init_of[l] = e
        t = ctx.time_of(fin_enter)
        start = np.lexsort((loc[fin_enter], -t))[0]
        # OpenMP: at a thread's fork point (its ENTER of a parallel region) the path
        # moves to the master's fork point; at a team barrier it continues on the
        # threads that did not wait there
        omp_keys = sync_points(ctx)[6]
        next_offset, next_event = _omp_successors(ctx, omp_keys)
        sl, sf, st = (np.frombuffer(x, np.int64) for x in _core.rc_critical_walk(
            np.ascontiguousarray(loc, dtype=np.int32), init_of, _i64(w_key), _i64(w_to),
            _i64(omp_keys), next_offset, next_event, n, int(fin_leave[start])))
        chunks = _chunks(ctx)
        path = _chunk_sums(ctx, chunks, sl, sf, st)
        q, c, v = path.columns()
        NL = ctx.n_locations + 1
        NC = len(ctx.calltree) + 1
        cp = np.zeros((NL, NC))
        np.add.at(cp, (sl[q], c), v)
        # without the waiting time at the start of each stretch (at most the time
        # its call path has on the stretch)
        cn = ctx.cnode[sf].astype(np.int64)
        k = np.nonzero(cn >= 0)[0]
        entry = np.searchsorted(q * NC + c, k * NC + cn[k])
        found = entry < len(q)
        found[found] = (q[entry[found]] == k[found]) & (c[entry[found]] == cn[k][found])
        own = np.zeros(len(k))
        own[found] = v[entry[found]]
        np.subtract.at(cp, (sl[k], cn[k]), np.minimum(_wait_at(p, sf[k]), own))
        # every CPU location's time without its waiting time; a worker thread counts
        # only from each fork of its team to its last OpenMP point before the next
        # (Scalasca drops a worker's time outside its teams)
        cpu_locs = np.asarray([l.index for l in ctx.trace.locations if l.type == "CPU_THREAD"],
                              dtype=np.int64)
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
        everything = _chunk_sums(ctx, chunks, np.concatenate(r_loc), np.concatenate(r_lo),
                                 np.concatenate(r_hi)).columns()
        lt = np.zeros((NL, NC))
        np.add.at(lt, (np.concatenate(r_loc)[everything[0]], everything[1]), everything[2])
        wt = np.zeros((NL, NC))
        ok = p["cnode"] >= 0
        np.add.at(wt, (p["loc"][ok], p["cnode"][ok]), np.maximum(p["wait"][ok], 0))
        ltimes = lt - np.minimum(lt, wt)
        g = cp.sum(axis=0)
        on = g > 0
        activities = np.where(on[None, :], np.minimum(g[None, :], ltimes), 0.0)
        non_critical = np.maximum(ltimes - g[None, :], 0.0)
        cpu = np.zeros(NL, dtype=bool)
        cpu[[l.index for l in ctx.trace.locations if l.type == "CPU_THREAD"]] = True
        excess = np.maximum(g[None, :] - ltimes, 0.0)
        aggr_wait = g.sum() - ltimes.sum(axis=1)
        aggr_excess = excess.sum(axis=1)
        factor = np.where(aggr_excess > 0, aggr_wait / np.where(aggr_excess > 0, aggr_excess, 1), 0.0)
        global_costs = (excess * factor[:, None])[cpu].sum(axis=0)
        share = np.where(on[None, :] & (cp > 0), cp / np.where(on, g, 1)[None, :], 0.0)
        imbalance = np.maximum(share * global_costs[None, :], 0.0)

        def rows(m):
            l, c = np.nonzero(m)
            return to_ticks(ctx.n_locations, l, c, m[l, c])
        return {"critical_path": rows(cp), "critical_path_activities": rows(activities),
                "non_critical_path_activities": rows(non_critical),
                "critical_imbalance_impact": rows(imbalance)}
    return ctx.memo("critical_path", compute)


class _CriticalPath(Property):
    measures = "time"
    unit, group, reads = "sec", "root_cause", READS

    def totals(self, ctx):
        out = _critical_path(ctx)
        if out is None:
            e = np.empty(0, np.int64)
            return e, e, e
        return out[self.name]


class CriticalPath(_CriticalPath):
    name, title, cube_id = "critical_path", "Critical path", "critical_path"
    description = ("The critical path: from the process that enters MPI_Finalize last back "
                   "in time, moving at every wait state to the process waited for, until "
                   "MPI_Init. Its time per call path and location, without waiting time: what "
                   "determines the program's run time.")
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
